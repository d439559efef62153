"""Margin × experience: one row per tenant, money and what the user felt side by side."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboards.comparison import Comparison
from dashboards.filters import page_context, page_header
from dashboards.kpis import margin_pct
from dashboards.presentation import (
    Col,
    money_series,
    share_series,
    show_table,
    tenant_sessions_links,
)
from dashboards.queries import combined as queries

SORT_LABELS = {
    "gross_margin": "Gross margin",
    "gross_margin_pct": "Gross margin %",
    "total_cost": "Cost",
    "revenue": "Revenue",
    "false_interruption_rate": "False interruption rate",
    "prefix_cache_hit_rate": "Prefix cache hit rate",
    "interruption_rate": "Interruption rate",
    "interruption_waste_cost": "Interruption waste",
    "cache_savings": "Cache savings",
    "first_audio_p95_ms": "First audio P95",
    "tenant_id": "Tenant",
}

context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header(
    "Margin × experience",
    context,
    "Read the false interruption rate and the cache hit rate next to cost and margin: an "
    "interruption is a cost event, a cache hit is margin.",
)

left, right = st.columns([3, 1])
sort = left.selectbox(
    "Sort by",
    options=list(SORT_LABELS),
    format_func=SORT_LABELS.get,
    key="combined_sort",
)
descending = right.toggle("Highest first", value=True, key="combined_descending")
rows = queries.combined_by_tenant(version, filters, sort, descending)
if rows.empty:
    st.info("No sessions in the selected period and filters. Widen the date range in the sidebar.")
    st.stop()

comparison = Comparison.of(context)
earlier = queries.combined_by_tenant(version, comparison.previous, "tenant_id", False)
comparison = comparison.counted(int(earlier["sessions"].sum()) if not earlier.empty else 0)
earlier = earlier.set_index("tenant_id")
rows["margin_change"] = comparison.tenant_changes(rows, earlier, "gross_margin")
rows["sessions_link"] = tenant_sessions_links(filters, rows["tenant_id"])

# The percentage shown is derived from the exact amounts; SQL's value only orders the rows.
rows["gross_margin_pct"] = [
    margin_pct(revenue, cost)
    for revenue, cost in zip(rows["revenue"], rows["total_cost"], strict=True)
]
show_table(
    rows,
    [
        Col("sessions_link", "Open", "link", display="Sessions", width="small"),
        Col("tenant_id", "Tenant", width="medium"),
        Col("gross_margin", "Gross margin", "money", help="Revenue − cost."),
        Col("gross_margin_pct", "Gross margin", "pct", help="Gross margin ÷ revenue."),
        Col(
            "margin_change",
            comparison.column("Gross margin change"),
            "money",
            comparison.note(),
        ),
        Col(
            "false_interruption_rate",
            "False interruption rate",
            "share",
            help="False interruptions ÷ interrupted turns.",
        ),
        Col(
            "prefix_cache_hit_rate",
            "Prefix cache hit rate",
            "share",
            help="Cached input tokens ÷ input tokens (LLM and realtime).",
        ),
        Col("interruption_waste_cost", "Interruption waste", "money"),
        Col("revenue", "Revenue", "money", help="Revenue of the closed, billed sessions."),
        Col("total_cost", "Cost", "money", help="Cost of every session, open ones included."),
        Col("cache_savings", "Cache savings", "money"),
        Col(
            "interruption_rate",
            "Interruption rate",
            "share",
            help="Interrupted turns ÷ turns.",
        ),
        Col(
            "tts_phrase_cache_hit_rate",
            "TTS phrase cache hit rate",
            "share",
            help="Cached TTS characters ÷ TTS characters.",
        ),
        Col(
            "degradation_rate",
            "Degraded sessions",
            "share",
            help="Sessions with a degradation ÷ sessions.",
        ),
        Col(
            "first_audio_p95_ms",
            "First audio P95",
            "ms",
            help="95th percentile of the complete turns' first audio.",
        ),
        Col("sessions", "Sessions", "int"),
    ],
    currency,
    key="combined_table",
    pinned=2,
)
st.caption("Click a column header to sort the table by any other column. " + comparison.note())

chart = rows.assign(
    gross_margin=money_series(rows["gross_margin"]),
    false_interruption_rate=share_series(rows["false_interruption_rate"]),
    waste=money_series(rows["interruption_waste_cost"]).fillna(0),
)
scatter = px.scatter(
    chart,
    x="false_interruption_rate",
    y="gross_margin",
    size="waste",
    size_max=40,
    text="tenant_id",
    labels={
        "false_interruption_rate": "False interruption rate (%)",
        "gross_margin": f"Gross margin ({currency})",
        "waste": f"Interruption waste ({currency})",
    },
    height=380,
    title="Margin against false interruptions (bubble: interruption waste)",
)
scatter.update_traces(textposition="top center")
st.plotly_chart(scatter, key="combined_scatter")
