"""The margin page: per tenant, per period, cost breakdowns and LLM phase routing."""

from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run, run_parts
from dashboards.queries.common import (
    PERIOD_EXTRAS,
    SESSION_AGGREGATES,
    allowed,
    cached,
    published_table,
    session_filter,
    sessions_cte,
)
from dashboards.queries.overview import period_totals
from ledger.report.restatement import restatements_sql

if TYPE_CHECKING:
    from dashboards.filters import Filters

__all__ = [
    "COST_BREAKDOWNS",
    "PERIOD_GRAINS",
    "cost_breakdown",
    "cost_by_phase_route",
    "margin_by_period",
    "margin_headline",
    "period_totals",
    "restatements",
]

# Allow-lists: a label the page may ask for -> the SQL it stands for.
PERIOD_GRAINS = {"day": "business_date", "week": "week_start_date"}
COST_BREAKDOWNS = {
    "component": ("component",),
    "provider": ("component", "provider"),
    "provider_model": ("component", "provider", "model"),
}


@cached
def margin_headline(
    version: str, filters: Filters, previous: Filters
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The totals (as `period_totals`) and the per-tenant figures (sessions, billable minutes,
    revenue, cost per component, margin, waste, savings) of `filters` and of `previous` (the
    comparison period): four answers from one statement instead of four."""
    now, now_params = session_filter(filters)
    before, before_params = session_filter(previous)
    figures = f"{SESSION_AGGREGATES},\n            {PERIOD_EXTRAS}"
    sql = f"""
        with current_period as (select * from marts.fct_session_ledger where {now}),
        previous_period as (select * from marts.fct_session_ledger where {before})
        select 'now' as part, null::varchar as tenant_id, {figures} from current_period
        union all
        select 'before' as part, null::varchar as tenant_id, {figures} from previous_period
        union all
        select 'now_by_tenant' as part, tenant_id, {figures} from current_period group by tenant_id
        union all
        select 'before_by_tenant' as part, tenant_id, {figures} from previous_period group by tenant_id
        order by part, tenant_id
    """
    totals = frozenset({"tenant_id"})
    by_tenant = frozenset({"billed_sessions", "sessions_with_unpriced_usage"})
    parts = run_parts(
        version,
        sql,
        [*now_params, *before_params],
        {
            "now": totals,
            "before": totals,
            "now_by_tenant": by_tenant,
            "before_by_tenant": by_tenant,
        },
    )
    return parts["now"], parts["before"], parts["now_by_tenant"], parts["before_by_tenant"]


@cached
def margin_by_period(version: str, filters: Filters, grain: str) -> pd.DataFrame:
    """Per tenant and day (`grain` = day) or ISO week (week, keyed by its Monday)."""
    period = allowed(grain, PERIOD_GRAINS)
    cte, params = sessions_cte(filters)
    sql = f"""
        with {cte}
        select
            {period} as period_start,
            any_value(iso_week) as iso_week,
            tenant_id,
            {SESSION_AGGREGATES}
        from sessions
        group by {period}, tenant_id
        order by period_start, tenant_id
    """
    return run(version, sql, params)


@cached
def cost_breakdown(version: str, filters: Filters, breakdown: str) -> pd.DataFrame:
    """Priced cost and cache savings of the filtered sessions' usage lines by component,
    provider or provider/model; unpriced lines are counted, never costed. From
    `marts.fct_usage_cost_daily` (the lines summed per session grain and cell: its grain carries
    every sidebar filter), not from every usage line."""
    columns = ", ".join(allowed(breakdown, COST_BREAKDOWNS))
    where, params = session_filter(filters)
    sql = f"""
        select
            {columns},
            coalesce(sum(cost), 0) as cost,
            coalesce(sum(cache_savings), 0) as cache_savings,
            cast(coalesce(sum(unpriced_line_count), 0) as bigint) as unpriced_lines
        from marts.fct_usage_cost_daily
        where {where}
        group by {columns}
        order by cost desc, {columns}
    """
    return run(version, sql, params)


@cached
def cost_by_phase_route(version: str, filters: Filters) -> pd.DataFrame:
    """LLM cost, calls and tokens by session phase and model route (SPEC 6: judge phase routing),
    from `marts.fct_cost_by_phase_route` (its grain carries every sidebar filter)."""
    where, params = session_filter(filters)
    sql = f"""
        select
            phase,
            route,
            sum(llm_call_count) as llm_calls,
            sum(input_tokens + cached_input_tokens) as input_tokens,
            sum(cached_input_tokens) as cached_input_tokens,
            sum(output_tokens) as output_tokens,
            sum(llm_cost) as llm_cost,
            sum(llm_cache_savings) as llm_cache_savings,
            sum(unpriced_usage_event_count) as unpriced_calls
        from marts.fct_cost_by_phase_route
        where {where}
        group by all
        order by llm_cost desc, phase, route
    """
    return run(version, sql, params)


@cached
def restatements(version: str, filters: Filters) -> pd.DataFrame:
    """The restatements the weekly reviews found (as the review lists them,
    ledger/report/restatement.py), of the filters' tenants: those of a restated week or a review
    week overlapping the selected dates."""
    if not published_table(version, "review_restatements"):
        return pd.DataFrame()
    params: list = []
    where = "true"
    if filters.tenants:
        where, params = "list_contains(?::varchar[], tenant_id)", [list(filters.tenants)]
    found = run(version, restatements_sql("marts.review_restatements", where), params)
    if found.empty:
        return found

    def overlaps(week: str) -> bool:
        monday = date.fromisocalendar(int(week[:4]), int(week[6:]), 1)
        return monday <= filters.date_to and monday + timedelta(days=6) >= filters.date_from

    keep = [
        overlaps(restated) or overlaps(review)
        for restated, review in zip(found["iso_week"], found["found_in_report_week"], strict=True)
    ]
    return found[keep].reset_index(drop=True)
