"""Margin board: by tenant, by day or week, by component and provider/model, phase and route."""

from __future__ import annotations

import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboards.filters import page_context, page_header
from dashboards.formatting import money
from dashboards.kpis import margin_pct
from dashboards.presentation import COMPONENT_LABELS, Col, money_series, show_table
from dashboards.queries import margin as queries
from ledger.vocabulary import COMPONENTS, SAVINGS_KINDS

context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header("Margin", context)

by_tenant = queries.margin_by_tenant(version, filters)
if by_tenant.empty:
    st.info("No sessions in the selected period and filters. Widen the date range in the sidebar.")
    st.stop()

# ---- by tenant -----------------------------------------------------------------------------------
st.subheader("By tenant")
by_tenant["gross_margin_pct"] = [
    margin_pct(revenue, cost)
    for revenue, cost in zip(by_tenant["revenue"], by_tenant["total_cost"], strict=True)
]
show_table(
    by_tenant,
    [
        Col("tenant_id", "Tenant"),
        Col("sessions", "Sessions", "int"),
        Col("billable_minutes", "Billable minutes", "minutes"),
        Col("revenue", "Revenue", "money"),
        *[Col(f"{c}_cost", f"{COMPONENT_LABELS[c]} cost", "money") for c in COMPONENTS],
        Col("total_cost", "Cost", "money"),
        Col("gross_margin", "Gross margin", "money"),
        Col("gross_margin_pct", "Gross margin", "pct"),
        Col("interruption_waste_cost", "Interruption waste", "money"),
        Col("cache_savings", "Cache savings", "money"),
    ],
    currency,
    key="margin_by_tenant",
)
st.caption(
    "Interruption waste is cost already counted above, attributed to output cut off by the user; "
    "cache savings are cost avoided."
)

waste_savings = go.Figure()
waste_savings.add_bar(
    x=by_tenant["tenant_id"],
    y=money_series(by_tenant["interruption_waste_cost"]),
    name="Interruption waste",
)
waste_savings.add_bar(
    x=by_tenant["tenant_id"], y=money_series(by_tenant["cache_savings"]), name="Cache savings"
)
waste_savings.update_layout(barmode="group", yaxis_title=currency, height=320, margin={"t": 30})
waste_savings.update_layout(title="Interruption waste and cache savings by tenant")
st.plotly_chart(waste_savings, key="margin_waste_savings")

# ---- over time -----------------------------------------------------------------------------------
st.subheader("Over time")
grain = st.segmented_control(
    "Period",
    options=list(queries.PERIOD_GRAINS),
    default="day",
    format_func={"day": "Day", "week": "ISO week"}.get,
    key="margin_grain",
    required=True,
)
periods = queries.margin_by_period(version, filters, grain or "day")
periods["period"] = periods["iso_week"] if grain == "week" else periods["period_start"].map(str)
margin_chart = px.line(
    periods.assign(gross_margin=money_series(periods["gross_margin"])),
    x="period",
    y="gross_margin",
    color="tenant_id",
    markers=True,
    labels={"gross_margin": f"Gross margin ({currency})", "period": "", "tenant_id": "Tenant"},
    height=340,
)
st.plotly_chart(margin_chart, key="margin_over_time")
show_table(
    periods,
    [
        Col("period", "Period"),
        Col("tenant_id", "Tenant"),
        Col("sessions", "Sessions", "int"),
        Col("revenue", "Revenue", "money"),
        Col("total_cost", "Cost", "money"),
        Col("gross_margin", "Gross margin", "money"),
        Col("interruption_waste_cost", "Interruption waste", "money"),
        Col("cache_savings", "Cache savings", "money"),
    ],
    currency,
    key="margin_periods",
    height=280,
)

# ---- by component and provider/model -------------------------------------------------------------
st.subheader("Cost by component and provider/model")
breakdown = st.segmented_control(
    "Break cost down by",
    options=list(queries.COST_BREAKDOWNS),
    default="provider_model",
    format_func={
        "component": "Component",
        "provider": "Provider",
        "provider_model": "Provider / model",
    }.get,
    key="margin_breakdown",
    required=True,
)
breakdown = breakdown or "provider_model"
costs = queries.cost_breakdown(version, filters, breakdown)
levels = list(queries.COST_BREAKDOWNS[breakdown])
if not costs.empty:
    chart_data = costs.assign(cost=money_series(costs["cost"]))
    chart_data = chart_data[chart_data["cost"] > 0]
    if not chart_data.empty:
        sunburst = px.sunburst(
            chart_data, path=levels, values="cost", height=380, title=f"Cost ({currency})"
        )
        st.plotly_chart(sunburst, key="margin_cost_sunburst")
show_table(
    costs,
    [
        *[Col(level, level.capitalize()) for level in levels],
        Col("cost", "Cost", "money"),
        Col("cache_savings", "Cache savings", "money"),
        Col("unpriced_lines", "Unpriced lines", "int"),
    ],
    currency,
    key="margin_cost_breakdown",
)

# ---- savings by kind -----------------------------------------------------------------------------
totals = queries.period_totals(version, filters).iloc[0]
st.subheader("Cache savings by kind")
kinds = st.columns(len(SAVINGS_KINDS))
for column, kind in zip(kinds, SAVINGS_KINDS, strict=True):
    label = {"llm": "LLM prefix", "realtime": "Realtime", "tts": "TTS phrase", "vision": "Vision"}
    column.metric(f"{label[kind]} cache", money(totals[f"{kind}_cache_savings"], currency))

# ---- phase and route -----------------------------------------------------------------------------
st.subheader("LLM cost by phase and route")
phases = queries.cost_by_phase_route(version, filters)
if not phases.empty:
    phase_chart = px.bar(
        phases.assign(llm_cost=money_series(phases["llm_cost"])),
        x="phase",
        y="llm_cost",
        color="route",
        labels={"llm_cost": f"LLM cost ({currency})", "phase": "Phase", "route": "Route"},
        category_orders={"phase": ["greeting", "intake", "substantive", "closing", "(none)"]},
        height=320,
    )
    st.plotly_chart(phase_chart, key="margin_phase_route_chart")
show_table(
    phases,
    [
        Col("phase", "Phase"),
        Col("route", "Route"),
        Col("llm_calls", "LLM calls", "int"),
        Col("input_tokens", "Input tokens", "int"),
        Col("output_tokens", "Output tokens", "int"),
        Col("llm_cost", "LLM cost", "money"),
        Col("llm_cache_savings", "Prefix cache savings", "money"),
    ],
    currency,
    key="margin_phase_route",
)
