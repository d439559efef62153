"""Data quality: what the ledger could not take in or could not price (or convert), and how fresh
it is."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboards import charts
from dashboards.comparison import Comparison
from dashboards.filters import page_context, page_header
from dashboards.formatting import count_delta, lag_text
from dashboards.presentation import COMPONENT_LABELS, Col, human, meter_label, show_table
from dashboards.queries import data_quality as queries
from dashboards.reconciliation import show_reconciliation


def _lines(frame: pd.DataFrame) -> int:
    return int(frame["lines"].sum()) if not frame.empty else 0


context = page_context()
publication, filters, currency, version = (
    context.publication,
    context.filters,
    context.currency,
    context.version,
)
page_header("Data quality", context)

reasons = queries.quarantine_by_reason(version)
unpriced = queries.unpriced_usage(version, filters)
unpriced["component"] = unpriced["component"].map(lambda c: human(c, COMPONENT_LABELS))
unpriced["meter"] = unpriced["meter"].map(meter_label)
unpriced_waste = queries.unpriced_interruptions(version, filters)
files = queries.ingested_files(version)

comparison = Comparison.of(context)
unpriced_before = queries.unpriced_usage(version, comparison.previous)
freshness, counts = st.columns(3), st.columns(3)
freshness[0].metric(
    "Newest event",
    f"{publication.newest_event_at:%Y-%m-%d %H:%M} UTC" if publication.newest_event_at else "—",
    help="The latest occurred_at of any event in the published copy.",
)
freshness[1].metric(
    "Data lag",
    lag_text(publication.published_at, publication.newest_event_at),
    help="Time between the newest event and the build that published it: how far the boards "
    "trail the traffic they had when they were built.",
)
freshness[2].metric(
    "Last build published",
    f"{publication.published_at:%Y-%m-%d %H:%M} UTC",
    help="When the published copy the boards read was written.",
)
counts[0].metric(
    "Quarantined rows",
    f"{int(reasons['rows'].sum()) if not reasons.empty else 0:,}",
    help="Every file ever ingested, all tenants.",
)
counts[1].metric(
    "Unpriced usage lines",
    f"{_lines(unpriced):,}",
    comparison.delta(count_delta(_lines(unpriced), _lines(unpriced_before))),
    delta_color="inverse",
    help="Usage lines with no rate-card price, in the sidebar's period and filters.",
)
counts[2].metric("Ingested files", f"{len(files):,}", help="Every file ever ingested.")
st.caption(
    f"{publication.events:,} events in the warehouse from {len(files):,} ingested files. "
    "Quarantined rows and ingested files cover every file ever ingested, whatever the sidebar "
    "says: a quarantined row may not even have a readable tenant, so the tenant, scenario and "
    "date filters do not apply to them. Unpriced usage follows the sidebar filters. "
    + comparison.note()
)

st.subheader("Data lag per source")
st.caption(
    "Per source, the newest batch in this published copy: when the collector accepted it (its "
    "`202`) and how long before the publication that was, the time a batch takes to reach the "
    "boards while the source sends. Files dropped into the landing folder directly count from "
    "their ingest, under “(landing folder)”."
)
show_table(
    queries.data_lag_by_source(version),
    [
        Col("source", "Source"),
        Col("newest_accepted_at", "Newest batch accepted (UTC)"),
        Col("files", "Files", "int"),
        Col("events", "Events", "int"),
        Col("data_lag_seconds", "Data lag (s)", "number"),
    ],
    currency,
    key="quality_lag",
    empty="No file has been ingested.",
)

st.subheader("Quarantined rows by reason")
left, right = st.columns([2, 3])
with left:
    show_table(
        reasons,
        [Col("reason", "Reason"), Col("rows", "Rows", "int"), Col("files", "Files", "int")],
        currency,
        key="quality_reasons",
        empty="No row has been quarantined.",
    )
with right:
    if not reasons.empty:
        st.plotly_chart(
            charts.bar(
                reasons, x="reason", y="rows", labels={"reason": "", "rows": "Rows"}, height=260
            ),
            key="quality_reasons_chart",
        )

st.subheader("Quarantined rows by file")
show_table(
    queries.quarantine_by_file(version),
    [
        Col("source_file", "Source file"),
        Col("reason", "Reason"),
        Col("rows", "Rows", "int"),
        Col("first_line", "First line", "int"),
    ],
    currency,
    key="quality_files",
    empty="No row has been quarantined.",
    height=300,
)

st.subheader("Unpriced usage")
st.caption(
    "A meter used with no rate-card price in effect: its cost is unknown and left out of every "
    "total (never counted as 0). Add the price to the rate card and rebuild."
)
show_table(
    unpriced,
    [
        Col("component", "Component"),
        Col("provider", "Provider"),
        Col("model", "Model"),
        Col("meter", "Meter"),
        Col("unpriced_reason", "Why"),
        Col("lines", "Lines", "int"),
        Col("quantity", "Quantity", "number"),
        Col("sessions", "Sessions", "int"),
        Col("first_at", "First (UTC)"),
        Col("last_at", "Last (UTC)"),
    ],
    currency,
    key="quality_unpriced",
    empty="Every usage line in the selected period is priced.",
)
if not unpriced_waste.empty:
    show_table(
        unpriced_waste,
        [
            Col("unpriced_reason", "Interruption waste unpriced because"),
            Col("interruptions", "Interruptions", "int"),
        ],
        currency,
        key="quality_unpriced_waste",
    )

st.subheader("Reported costs held")
st.caption(
    "A cost a provider or platform reported in a currency with no FX rate on or before its date: "
    "held, converted by no rate and counted in no total (where it stood for a component's cost, "
    "the session has unpriced usage). Add the rate to fx_rates.csv and rebuild: it is converted "
    "and leaves this list."
)
held = queries.held_reported_costs(version, filters)
held["component"] = held["component"].map(lambda c: human(c, COMPONENT_LABELS))
show_table(
    held,
    [
        Col("event_id", "Event id"),
        Col("source", "Source"),
        Col("file", "File"),
        Col("line", "Line", "int"),
        Col("tenant_id", "Tenant"),
        Col("session_id", "Session"),
        Col("component", "Component"),
        Col("provider", "Provider"),
        Col("reported_amount", "Amount", "number"),
        Col("reported_currency", "Currency"),
        Col("reported_date", "Date (UTC)"),
    ],
    currency,
    key="quality_held_reports",
    empty="No reported cost in the selected period is waiting for an FX rate.",
)

show_reconciliation(version, filters.date_from, filters.date_to, currency)

st.subheader("Ingested files")
show_table(
    files,
    [
        Col("path", "File"),
        Col("rows", "Rows", "int"),
        Col("accepted", "Accepted", "int"),
        Col("duplicates", "Duplicates", "int"),
        Col("quarantined", "Quarantined", "int"),
        Col("ingested_at", "Ingested (UTC)"),
    ],
    currency,
    key="quality_ingested",
    empty="No file has been ingested.",
    height=300,
)
meta = queries.reference_meta(version)
if not meta.empty:
    row = meta.iloc[0]
    st.caption(
        f"Reference data from `{row['reference_dir']}`, loaded {row['loaded_at']} UTC "
        f"(content {str(row['content_sha256'])[:12]}…)."
    )
