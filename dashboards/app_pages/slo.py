"""Latency SLOs (SPEC 13): the budget table operated as SLOs, burn-rate alerts, leverage."""

from __future__ import annotations

import streamlit as st

from dashboards.filters import page_context, page_header
from dashboards.presentation import Col, show_table
from dashboards.queries import slo as queries

context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header(
    "Latency SLOs",
    context,
    "Each budget line of latency_budgets.yaml as an SLO: the share of turns within the segment's "
    "budget (first audio: the first-audio total) over a rolling window, against the profile's "
    "objective. The error budget is the bad turns the objective allows; burn rate is how fast "
    "it goes (1: exactly over the window).",
)

if not queries.has_slos(version):
    st.info("No SLOs yet: build once with this version of the ledger.")
    st.stop()

# A deep link (an alert's) names the tenant; the sidebar's choice wins when there is one.
linked = tuple(t for t in [st.query_params.get("tenant")] if t)
slos = queries.slos(version, filters, linked)
if not slos.empty:
    first = slos.iloc[0]
    st.caption(
        f"Window: the {int(first['window_days'])} days to {first['evaluated_at']:%Y-%m-%d %H:%M} "
        "UTC (the newest measured turn). The period in the sidebar does not apply here."
    )

st.subheader("Burning now")
show_table(
    queries.burning(version, filters, linked),
    [
        Col("tenant_id", "Tenant"),
        Col("segment", "Segment"),
        Col("owner", "Owner"),
        Col("severity", "Severity"),
        Col("rule_name", "Rule"),
        Col("long_burn_rate", "Burn rate, long window", "number"),
        Col("short_burn_rate", "Burn rate, short window", "number"),
        Col("factor", "Above", "number"),
        Col("profile", "Profile"),
    ],
    currency,
    key="slo_burning",
    empty="No burn-rate rule fires: every SLO spends its error budget slowly enough.",
)

st.subheader("SLOs by tenant")
show_table(
    slos,
    [
        Col("tenant_id", "Tenant"),
        Col("segment", "Segment"),
        Col("profile", "Profile"),
        Col("owner", "Owner"),
        Col("objective", "Objective", "share"),
        Col("sli", "Within budget", "share"),
        Col("turns", "Turns", "int"),
        Col("bad_turns", "Over budget", "int"),
        Col("error_budget_turns", "Error budget (turns)", "number"),
        Col("error_budget_remaining", "Error budget left", "share"),
        Col("is_objective_met", "Objective met", "bool"),
    ],
    currency,
    key="slo_table",
    pinned=2,
)

st.subheader("By owner team")
show_table(
    queries.owners(version),
    [
        Col("owner", "Owner"),
        Col("segment", "Segment"),
        Col("profile", "Profile"),
        Col("sli", "Within budget", "share"),
        Col("objective", "Objective", "share"),
        Col("error_budget_remaining", "Error budget left", "share"),
        Col("tenants_missing_objective", "Tenants missing it", "int"),
        Col("tenants", "Tenants", "int"),
        Col("turns", "Turns", "int"),
    ],
    currency,
    key="slo_owners",
)

st.subheader("Leverage: where a millisecond saved matters most")
st.caption(
    "Per profile and tenant, each segment's P50 and P95 on complete turns and its share of the "
    "five segments' P50 (P95) added up, ranked by P95; next to its share of the first-audio "
    "budget."
)
show_table(
    queries.leverage(version, filters, linked),
    [
        Col("tenant_id", "Tenant"),
        Col("p95_rank", "Rank (P95)", "int"),
        Col("segment", "Segment"),
        Col("owner", "Owner"),
        Col("p95_share", "Share of time at P95", "share"),
        Col("p50_share", "Share of time at P50", "share"),
        Col("budget_share", "Share of the budget", "share"),
        Col("p95_ms", "P95", "ms"),
        Col("p50_ms", "P50", "ms"),
        Col("profile", "Profile"),
    ],
    currency,
    key="slo_leverage",
    pinned=2,
)
