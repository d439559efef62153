"""Data quality: what the ledger could not take in or could not price, and how fresh it is."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards.filters import page_context, page_header
from dashboards.presentation import Col, show_table
from dashboards.queries import data_quality as queries
from dashboards.reconciliation import show_reconciliation

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
unpriced_waste = queries.unpriced_interruptions(version, filters)
files = queries.ingested_files(version)

freshness, counts = st.columns(2), st.columns(2)
freshness[0].metric(
    "Newest event",
    f"{publication.newest_event_at:%Y-%m-%d %H:%M} UTC" if publication.newest_event_at else "—",
)
freshness[1].metric("Last build published", f"{publication.published_at:%Y-%m-%d %H:%M} UTC")
counts[0].metric("Quarantined rows", f"{int(reasons['rows'].sum()) if not reasons.empty else 0:,}")
counts[1].metric(
    "Unpriced usage lines", f"{int(unpriced['lines'].sum()) if not unpriced.empty else 0:,}"
)
st.caption(
    f"{publication.events:,} events in the warehouse from {len(files):,} ingested files. "
    "Quarantine covers every file ever ingested; unpriced usage follows the sidebar filters."
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
            px.bar(
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
