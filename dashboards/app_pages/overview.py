"""Overview: where the money went in the selected period, how it moved against the last one and
what drove the move, with the anomalies the alerts found marked on the trend."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dashboards.comparison import Comparison
from dashboards.drivers_view import render_drivers
from dashboards.filters import page_context, page_header
from dashboards.formatting import count_delta, money, money_delta
from dashboards.kpi_cells import margin_cells
from dashboards.kpis import PeriodKpis
from dashboards.presentation import COMPONENT_COLOURS, COMPONENT_LABELS, money_series
from dashboards.queries import anomalies as anomaly_queries
from dashboards.queries import overview as queries
from dashboards.queries.drivers import drivers
from dashboards.timeline import mark_anomalies, time_axis
from ledger.core.vocabulary import COMPONENTS

context = page_context()
filters, currency, version = context.filters, context.currency, context.version
comparison = Comparison.of(context)
previous = comparison.previous
page_header("Overview", context)

now = PeriodKpis.from_totals(queries.period_totals(version, filters))
before = PeriodKpis.from_totals(queries.period_totals(version, previous))
comparison = comparison.counted(before.sessions)

if now.sessions == 0:
    st.info(
        "No sessions in the selected period and filters. Widen the date range or clear a "
        "filter in the sidebar."
    )
    st.stop()

first, second = st.columns(4), st.columns(4)
margin_cells(first, now, before, comparison, currency)
second[0].metric(
    "Cost per billable minute",
    money(now.cost_per_billable_minute, currency),
    comparison.delta(
        money_delta(now.cost_per_billable_minute, before.cost_per_billable_minute, currency)
    ),
    help="Cost ÷ billable minutes of the billed sessions.",
    delta_color="inverse",
)
second[1].metric(
    "Interruption waste",
    money(now.interruption_waste_cost, currency),
    comparison.delta(
        money_delta(now.interruption_waste_cost, before.interruption_waste_cost, currency)
    ),
    delta_color="inverse",
    help="Cost of output tokens and TTS audio generated and then cut off; already inside Cost.",
)
second[2].metric(
    "Cache savings",
    money(now.cache_savings, currency),
    comparison.delta(money_delta(now.cache_savings, before.cache_savings, currency)),
    help="Cost avoided by prefix, TTS phrase and vision caches.",
)
second[3].metric(
    "Sessions", f"{now.sessions:,}", comparison.delta(count_delta(now.sessions, before.sessions))
)
st.caption(
    comparison.note()
    + " Revenue counts closed, billed sessions; cost counts every session, open ones included."
)

# A one-day selection is drawn by hour: a day of one point would be a sliver on a millisecond axis.
hourly = filters.days == 1
if hourly:
    daily = queries.hourly_trend(version, filters, context.publication.timezone)
    dates = daily["hour"]
else:
    daily = queries.daily_trend(version, filters)
    dates = daily["business_date"]
marks = anomaly_queries.anomalies(version, filters)
per = "hour" if hourly else "day"


def timeline(figure: go.Figure) -> go.Figure:
    """The page's time axis, with the anomalies of the period marked on their days."""
    time_axis(figure, hourly=hourly, days=filters.days)
    return mark_anomalies(figure, marks, hourly=hourly)


st.subheader(f"Revenue, cost and margin per {per}")
trend = go.Figure()
trend.add_bar(x=dates, y=money_series(daily["revenue"]), name="Revenue")
trend.add_bar(x=dates, y=money_series(daily["total_cost"]), name="Cost")
trend.add_scatter(
    x=dates, y=money_series(daily["gross_margin"]), name="Gross margin", mode="lines+markers"
)
trend.update_layout(barmode="group", yaxis_title=currency, height=360, margin={"t": 30})
st.plotly_chart(timeline(trend), key="overview_trend")

render_drivers(drivers(version, filters, previous), comparison, filters, currency, "overview")

left, right = st.columns(2)
with left:
    st.subheader(f"Cost by component per {per}")
    components = go.Figure()
    for component in COMPONENTS:
        components.add_bar(
            x=dates,
            y=money_series(daily[f"{component}_cost"]),
            name=COMPONENT_LABELS[component],
            marker_color=COMPONENT_COLOURS[component],
        )
    components.update_layout(barmode="stack", yaxis_title=currency, height=340, margin={"t": 30})
    st.plotly_chart(timeline(components), key="overview_components")
with right:
    st.subheader("Interruption waste and cache savings")
    waste = go.Figure()
    waste.add_scatter(
        x=dates, y=money_series(daily["interruption_waste_cost"]), name="Interruption waste"
    )
    waste.add_scatter(x=dates, y=money_series(daily["cache_savings"]), name="Cache savings")
    waste.update_layout(yaxis_title=currency, height=340, margin={"t": 30})
    st.plotly_chart(timeline(waste), key="overview_waste")
