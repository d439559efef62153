"""Spend budgets (SPEC 13): each tenant's month against its budget, with a forecast."""

from __future__ import annotations

from datetime import date

import plotly.express as px
import streamlit as st

from dashboards.filters import page_context, page_header
from dashboards.presentation import Col, money_series, show_table
from dashboards.queries import budgets as queries

context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header(
    "Spend budgets",
    context,
    "Each tenant's spend this month against its budget (spend_budgets.csv, in the reporting "
    "currency), and where the month is heading. Alerts go out at 80% and 100% of a budget, on the "
    "actual spend and on the forecast.",
)

closed = queries.last_closed(version, context.publication.timezone)
if not queries.has_budgets(version) or closed is None:
    st.info("No spend budgets yet: add spend_budgets.csv to the reference data and build.")
    st.stop()

# A deep link names the month (`?month=2026-11`); otherwise the month of the period's end.
asked = st.query_params.get("month")
try:
    month = date.fromisoformat(f"{asked}-01") if asked else filters.date_to.replace(day=1)
except ValueError:
    month = filters.date_to.replace(day=1)
as_of = min(closed, filters.date_to) if month == filters.date_to.replace(day=1) else closed
table = queries.budgets(version, month, as_of)
chosen = filters.tenants or tuple(t for t in [st.query_params.get("tenant")] if t)
if chosen and not table.empty:
    table = table[table["tenant_id"].isin(chosen)]
st.caption(
    f"{month:%B %Y}, seen on {min(as_of, queries.month_end(month)):%Y-%m-%d} (the newest "
    "complete day). Forecast: the month to date plus, for each day left, the mean of the days of "
    "its weekday so far; the interval takes each weekday's cheapest and dearest day instead."
)
show_table(
    table,
    [
        Col("tenant_id", "Tenant"),
        Col("provider", "Provider"),
        Col("status", "Status"),
        Col("budget", "Budget", "money"),
        Col("month_to_date", "Spent", "money"),
        Col("actual_pct", "Spent of budget", "pct"),
        Col("forecast", "Forecast", "money"),
        Col("forecast_low", "Forecast from", "money"),
        Col("forecast_high", "Forecast to", "money"),
        Col("forecast_pct", "Forecast of budget", "pct"),
        Col("days_remaining", "Days left", "int"),
    ],
    currency,
    key="budgets_table",
    empty=f"No spend budgets for {month:%B %Y}.",
    pinned=2,
)

tenants = sorted(set(table["tenant_id"])) if not table.empty else []
if tenants:
    tenant = st.selectbox("Tenant", tenants, key="budgets_tenant")
    spent = queries.cumulative(version, tenant, month, as_of)
    row = table[(table["tenant_id"] == tenant) & (table["provider"] == "all providers")]
    if not spent.empty:
        figure = px.line(
            x=spent["business_date"],
            y=money_series(spent["spent"]),
            labels={"x": "Business date", "y": f"Spent this month ({currency})"},
            title=f"{tenant}: spend to date",
        )
        if not row.empty:
            figure.add_hline(
                y=float(row["budget"].iloc[0]), line_dash="dash", annotation_text="budget"
            )
            figure.add_hline(
                y=float(row["forecast"].iloc[0]), line_dash="dot", annotation_text="forecast"
            )
        st.plotly_chart(figure, use_container_width=True)
