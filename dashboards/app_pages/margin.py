"""Margin board: by tenant, by day or week, by component and provider/model, phase and route."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards import charts
from dashboards.comparison import Comparison, covered, week_label
from dashboards.drivers_view import render_drivers
from dashboards.filters import page_context, page_header
from dashboards.kpi_cells import margin_cells
from dashboards.kpis import PeriodKpis, margin_pct
from dashboards.presentation import (
    COMPONENT_LABELS,
    SAVINGS_LABELS,
    Col,
    adding_up,
    adds_up_note,
    human,
    money_series,
    sessions_link,
    show_table,
    tenant_sessions_links,
)
from dashboards.queries import margin as queries
from dashboards.queries.drivers import drivers
from ledger.core.numbers import round_to_total, shown_change
from ledger.core.vocabulary import COMPONENTS, SAVINGS_KINDS
from ledger.report.restatement import figure_label

context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header("Margin", context)
comparison = Comparison.of(context)

# The period's and the comparison period's totals and tenants: one statement.
totals_now, totals_before, by_tenant, earlier = queries.margin_headline(
    version, filters, comparison.previous
)
if by_tenant.empty:
    st.info("No sessions in the selected period and filters. Widen the date range in the sidebar.")
    st.stop()

# ---- headline ------------------------------------------------------------------------------------
now = PeriodKpis.from_totals(totals_now)
before = PeriodKpis.from_totals(totals_before)
comparison = comparison.counted(before.sessions)
cells = st.columns(4)
margin_cells(cells, now, before, comparison, currency)
st.caption(comparison.note())
render_drivers(
    drivers(version, filters, comparison.previous), comparison, filters, currency, "margin"
)

# ---- by tenant -----------------------------------------------------------------------------------
st.subheader("By tenant")
by_tenant["gross_margin_pct"] = [
    margin_pct(revenue, cost)
    for revenue, cost in zip(by_tenant["revenue"], by_tenant["total_cost"], strict=True)
]
# Each tenant against its own comparison period (same length, just before; same filters). A
# tenant with sessions only then is a row too (nothing now), so the changes add up to the headline.
earlier = earlier.set_index("tenant_id")
gone = [t for t in earlier.index if t not in set(by_tenant["tenant_id"])]
if gone and comparison.coverage != "empty":
    by_tenant = pd.concat(
        [by_tenant, pd.DataFrame({"tenant_id": gone, "sessions": [0] * len(gone)})],
        ignore_index=True,
    )
totals_row = totals_now.iloc[0]
before_row = totals_before.iloc[0]
for column, name in (("revenue", "revenue"), ("total_cost", "cost"), ("gross_margin", "margin")):
    by_tenant[f"{name}_change"] = comparison.tenant_changes(
        by_tenant, earlier, column, (totals_row[column], before_row[column])
    )
by_tenant["sessions_link"] = tenant_sessions_links(filters, by_tenant["tenant_id"])
show_table(
    by_tenant,
    [
        Col("sessions_link", "Open", "link", display="Sessions", width="small"),
        Col("tenant_id", "Tenant", width="medium"),
        Col("gross_margin", "Gross margin", "money", help="Revenue − cost.", width="small"),
        Col(
            "margin_change",
            comparison.column("Gross margin change"),
            "money",
            comparison.note() + " The tenants' changes add up to the headline's.",
            width="small",
        ),
        Col("gross_margin_pct", "Gross margin", "pct", help="Gross margin ÷ revenue."),
        Col("revenue", "Revenue", "money", help="Revenue of the closed, billed sessions."),
        Col("revenue_change", comparison.column("Revenue change"), "money", comparison.note()),
        Col("total_cost", "Cost", "money", help="Cost of every session, open ones included."),
        Col("cost_change", comparison.column("Cost change"), "money", comparison.note()),
        Col("interruption_waste_cost", "Interruption waste", "money"),
        Col("cache_savings", "Cache savings", "money"),
        Col("sessions", "Sessions", "int"),
        Col("billable_minutes", "Billable minutes", "minutes"),
        *[Col(f"{c}_cost", f"{COMPONENT_LABELS[c]} cost", "money") for c in COMPONENTS],
    ],
    currency,
    key="margin_by_tenant",
    pinned=2,
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
days_with_data = covered(comparison)
if grain == "week":
    periods["period"] = [
        week_label(week, start, *days_with_data)
        for week, start in zip(periods["iso_week"], periods["period_start"], strict=True)
    ]
else:
    periods["period"] = periods["period_start"].map(str)
periods["sessions_link"] = [
    sessions_link(
        max(start, filters.date_from),
        min(start + timedelta(days=6), filters.date_to) if grain == "week" else start,
        tenants=(tenant,),
        scenarios=filters.scenarios,
        pipelines=filters.pipelines,
    )
    for start, tenant in zip(periods["period_start"], periods["tenant_id"], strict=True)
]
margin_chart = charts.line(
    periods.assign(gross_margin=money_series(periods["gross_margin"])),
    x="period",
    y="gross_margin",
    color="tenant_id",
    labels={"gross_margin": f"Gross margin ({currency})", "period": "", "tenant_id": "Tenant"},
    height=340,
)
st.plotly_chart(margin_chart, key="margin_over_time")
show_table(
    periods,
    [
        Col("period", "Period", width="large"),
        Col("tenant_id", "Tenant"),
        Col("revenue", "Revenue", "money"),
        Col("total_cost", "Cost", "money"),
        Col("gross_margin", "Gross margin", "money"),
        Col("interruption_waste_cost", "Interruption waste", "money"),
        Col("cache_savings", "Cache savings", "money"),
        Col("sessions", "Sessions", "int"),
        Col("sessions_link", "Sessions to triage", "link", display="Open sessions"),
    ],
    currency,
    key="margin_periods",
    height=280,
    pinned=2,
)
if grain == "week":
    st.caption(
        "Weeks are ISO weeks (Monday to Sunday); a week only partly inside the selected dates "
        "or the ledger's data is marked partial with the days it covers."
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
costs = adding_up(queries.cost_breakdown(version, filters, breakdown), "cost", "cache_savings")
costs["component"] = costs["component"].map(lambda c: human(c, COMPONENT_LABELS))
levels = list(queries.COST_BREAKDOWNS[breakdown])
if not costs.empty:
    chart_data = costs.assign(cost=money_series(costs["cost"]))
    chart_data = chart_data[chart_data["cost"] > 0]
    if not chart_data.empty:
        sunburst = charts.sunburst(
            chart_data, path=levels, values="cost", height=380, title=f"Cost ({currency})"
        )
        st.plotly_chart(sunburst, key="margin_cost_sunburst")
show_table(
    costs,
    [
        *[Col(level, level.capitalize()) for level in levels],
        Col("cost_shown", f"Cost ({currency})", "amount"),
        Col("cache_savings_shown", f"Cache savings ({currency})", "amount"),
        Col("unpriced_lines", "Unpriced lines", "int"),
    ],
    currency,
    key="margin_cost_breakdown",
    pinned=len(levels),
    places=2,
)
if not costs.empty:
    st.caption(adds_up_note(costs["cost"].sum(), currency, "priced cost of the usage lines"))

# ---- savings by kind -----------------------------------------------------------------------------
totals = totals_now.iloc[0]
st.subheader("Cache savings by kind")
kinds = st.columns(len(SAVINGS_KINDS))
by_kind = round_to_total([totals[f"{kind}_cache_savings"] for kind in SAVINGS_KINDS])
for column, kind, saved in zip(kinds, SAVINGS_KINDS, by_kind, strict=True):
    column.metric(SAVINGS_LABELS[kind], f"{currency} {saved:,.2f}")
st.caption(adds_up_note(totals["cache_savings"], currency, "cache savings of the period"))

# ---- phase and route -----------------------------------------------------------------------------
st.subheader("LLM cost by phase and route")
phases = adding_up(queries.cost_by_phase_route(version, filters), "llm_cost", "llm_cache_savings")
if not phases.empty:
    phase_chart = charts.bar(
        phases.assign(llm_cost=money_series(phases["llm_cost"])),
        x="phase",
        y="llm_cost",
        color="route",
        labels={"llm_cost": f"LLM cost ({currency})", "phase": "Phase", "route": "Route"},
        category_orders={"phase": ["greeting", "intake", "substantive", "closing", "unspecified"]},
        height=320,
    )
    st.plotly_chart(phase_chart, key="margin_phase_route_chart")
show_table(
    phases,
    [
        Col("phase", "Phase"),
        Col("route", "Route"),
        Col("llm_cost_shown", f"LLM cost ({currency})", "amount"),
        Col("llm_cache_savings_shown", f"Prefix cache savings ({currency})", "amount"),
        Col("llm_calls", "LLM calls", "int"),
        Col("input_tokens", "Input tokens", "int", help="Cached and uncached."),
        Col("cached_input_tokens", "Cached input tokens", "int"),
        Col("output_tokens", "Output tokens", "int"),
        Col("unpriced_calls", "Unpriced calls", "int"),
    ],
    currency,
    key="margin_phase_route",
    pinned=2,
    places=2,
)
if not phases.empty:
    st.caption(
        adds_up_note(phases["llm_cost"].sum(), currency, "LLM cost of the period")
        + " Phase or route `unspecified`: the call carried none."
    )

# ---- restatements --------------------------------------------------------------------------------
st.subheader("Restatements of weeks already reported")
restated = queries.restatements(version, filters)
if restated.empty:
    st.caption(
        "No week reported by a weekly review (of these dates and tenants) has changed since. "
        "`ledger report weekly` finds restatements and the boards show them once it has run."
    )
else:
    sessions_moved = {
        (week, tenant): (old, new)
        for week, tenant, figure, old, new in zip(
            restated["iso_week"], restated["tenant_id"], restated["figure"],
            restated["old_value"], restated["new_value"], strict=True,
        )
        if figure == "session_count"
    }  # fmt: skip
    restated["why"] = [
        f"late events: {int(sessions_moved[(w, t)][0]):,} → {int(sessions_moved[(w, t)][1]):,} "
        "sessions"
        if (w, t) in sessions_moved
        else "late events or a reference change (same sessions)"
        for w, t in zip(restated["iso_week"], restated["tenant_id"], strict=True)
    ]
    restated = restated[restated["figure"] != "session_count"].reset_index(drop=True)
    restated["figure_shown"] = [figure_label(f) for f in restated["figure"]]
    # As the review: the change is the difference of the amounts shown, exactly.
    restated["change"] = [
        shown_change(new, old)
        for new, old in zip(restated["new_value"], restated["old_value"], strict=True)
    ]
    show_table(
        restated,
        [
            Col("iso_week", "Week", width="small"),
            Col("tenant_id", "Tenant", width="small"),
            Col("figure_shown", "Figure", width="small"),
            Col("old_value", "Reported", "money", width="small"),
            Col("new_value", "Now", "money", width="small"),
            Col("change", "Change", "money", width="small"),
            Col("why", "Why", width="medium"),
            Col("found_in_report_week", "Found by the review of", width="small"),
        ],
        currency,
        key="margin_restatements",
        pinned=3,
    )
    st.caption(
        "What the weekly review reported for a closed week and what the ledger says now, as the "
        "review lists it; the change is now minus reported, to the cent."
    )
