"""Anomaly inbox: every cost anomaly and rate-card drift the alerts found in the period, with its
likely cause, whether it paged someone, and a link to the boards filtered to it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboards.filters import page_context, page_header
from dashboards.presentation import COMPONENT_LABELS, Col, board_page_link, show_table
from dashboards.queries import anomalies as queries
from ledger.alerts.delivery import METRIC_LABELS, anomaly_size, cause_text
from ledger.alerts.detection import Cause

# What became of an anomaly, from its notification outcome (ledger/alerts/store.py).
STATUS_LABELS = {
    "sent": "open",
    "pending_retry": "open · delivery pending",
    "cooldown": "cooled down",
    "not_paged": "not paged",
    "report_only": "found by the weekly review",
}
SEVERITY_LABELS = {"critical": "critical", "warning": "warning", "info": "info"}


def _none(value: object) -> object:
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else value


def cause_of(row: pd.Series) -> str:
    """The anomaly's likely cause in the alert's words."""
    cause = Cause(
        component=_none(row["cause_component"]),
        component_share=_none(row["cause_component_share"]),
        provider=_none(row["cause_provider"]),
        model=_none(row["cause_model"]),
        provider_share=_none(row["cause_provider_share"]),
        kind=str(row["cause_kind"]),
        hint=_none(row["cause_hint"]) or "",
    )
    return cause_text(cause)


context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header(
    "Anomaly inbox",
    context,
    "Cost anomalies per tenant and day and rate-card drifts per provider, as the daily alert run "
    "found them; each opens the boards filtered to its tenant and day.",
)
found = queries.anomalies(version, filters)
drifts = queries.drifts(version, filters)
if found.empty and drifts.empty:
    st.info(
        "No anomaly and no rate-card drift in the selected period. `ledger alerts run` (and the "
        "daily job) records them; widen the dates in the sidebar to see older ones."
    )
    st.stop()

if not found.empty:
    show_all = st.toggle(
        "Include anomalies below the paging severity",
        key="anomalies_all",
        help="Info-level findings: recorded, never notified.",
    )
    counted = found
    if not show_all:
        found = found[found["severity"] != "info"].reset_index(drop=True)
    found = found.copy()
    found["status"] = [STATUS_LABELS.get(n, n or "") for n in found["notification"]]
    found["severity_shown"] = [SEVERITY_LABELS.get(s, s) for s in found["severity"]]
    found["metric_shown"] = [METRIC_LABELS.get(m, m) for m in found["metric"]]
    found["size"] = [anomaly_size(row, currency) for row in found.itertuples()]
    found["cause"] = [cause_of(row) for _, row in found.iterrows()]
    found["open"] = [
        board_page_link("overview", {"tenant": tenant, "from": day, "to": day})
        for tenant, day in zip(found["tenant_id"], found["business_date"], strict=True)
    ]
    counts = pd.Series(
        [STATUS_LABELS.get(n, n or "") for n in counted["notification"]]
    ).value_counts()
    cells = st.columns(4)
    for cell, status in zip(cells, ("open", "cooled down", "not paged", "found by the weekly review"),
                            strict=True):  # fmt: skip
        cell.metric(status.capitalize(), f"{int(counts.get(status, 0)):,}")
    st.subheader("Cost anomalies")
    show_table(
        found,
        [
            Col("open", "Open", "link", display="Boards", width="small"),
            Col("business_date", "Day", width="small"),
            Col("tenant_id", "Tenant", width="medium"),
            Col("severity_shown", "Severity", width="small"),
            Col("status", "Status", width="small"),
            Col("metric_shown", "Metric", width="medium"),
            Col("size", "Value", width="large"),
            Col("cause", "Likely cause", width="large"),
        ],
        currency,
        key="anomalies_table",
        pinned=2,
    )
    st.caption(
        "Open: paged and notified. Cooled down: the same anomaly was notified less than the "
        "cooldown ago, so this one was held. Not paged: below the paging severity. Tenant and "
        "dates apply; scenario and pipeline filters do not (an anomaly is per tenant and day)."
    )

if not drifts.empty:
    st.subheader("Rate-card drift")
    drifts["status"] = [STATUS_LABELS.get(n, n or "") for n in drifts["notification"]]
    drifts["severity_shown"] = [SEVERITY_LABELS.get(s, s) for s in drifts["severity"]]
    drifts["component_shown"] = [COMPONENT_LABELS.get(c, c) for c in drifts["component"]]
    drifts["open"] = [
        board_page_link("overview", {"from": day, "to": day}) for day in drifts["usage_date"]
    ]
    show_table(
        drifts,
        [
            Col("open", "Open", "link", display="Boards", width="small"),
            Col("usage_date", "Day (UTC)", width="small"),
            Col("provider", "Provider", width="small"),
            Col("component_shown", "Component", width="small"),
            Col("difference", "Billed − priced", "money"),
            Col("difference_pct", "Difference", "pct"),
            Col("model", "Likely stale price (model)"),
            Col("severity_shown", "Severity", width="small"),
            Col("status", "Status", width="small"),
        ],
        currency,
        key="drifts_table",
        pinned=2,
    )
    st.caption(
        "What a provider billed against what the rate card priced, per UTC day, provider and "
        "component, beyond the tolerance: a stale price in the rate card, most often."
    )
