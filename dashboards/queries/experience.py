"""The experience page: the latency budget, first-audio trend, interruption/cache/degradation
rates (sums of the numerators and denominators of `marts.fct_session_experience`), concurrency."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run, run_parts
from dashboards.queries.common import allowed, cached, session_filter
from ledger.core.sql import literal
from ledger.core.vocabulary import BUDGET_LINES, DEGRADATION_KINDS

if TYPE_CHECKING:
    from dashboards.filters import Filters


def _budget_line_figures_sql() -> str:
    # Each budget line's figures over a group of turns, in one pass over the wide
    # fct_turn_latency (not one copy of every turn per line): its budget, the turns measured, P50
    # and P95 (one quantile computation for both) and the turns over budget.
    return ",\n".join(
        f"any_value({line}_budget_ms) as {line}_budget_ms, "
        f"count({line}_ms) as {line}_measured, "
        f"quantile_cont(cast({line}_ms as double), [0.5, 0.95]) as {line}_quantiles, "
        f"count(*) filter (where cast({line}_ms as double) > {line}_budget_ms) as {line}_over"
        for line in BUDGET_LINES
    )


def _budget_lines_sql() -> str:
    # One row per group and budget line, from the groups' figures; names come from BUDGET_LINES.
    return "\nunion all\n".join(
        f"select {_PROFILE_KEY_SQL}, breakdown, {literal(line)} as segment, {order} as segment_order, "
        f"{line}_budget_ms as budget_ms, {line}_measured as measured_turns, "
        f"round({line}_quantiles[1], 3) as p50_ms, round({line}_quantiles[2], 3) as p95_ms, "
        f"{line}_over / nullif({line}_measured, 0) as over_budget_share from line_figures"
        for order, line in enumerate(BUDGET_LINES, start=1)
    )


# What the budget table can be broken down by -> the SQL of the turn's group.
BUDGET_BREAKDOWNS = {
    "none": "'all turns'",
    "tenant": "turns.tenant_id",
    "scenario": "turns.scenario",
    "pipeline": "turns.pipeline",
    "provider": "coalesce(providers.provider, 'none')",
}
# The columns of the budget lines a turn is read for (not every column of fct_turn_latency: the
# turns are read twice, for the profiles and the lines).
_BUDGET_LINE_COLUMNS = ", ".join(
    f"turns.{line}_ms, turns.{line}_budget_ms" for line in BUDGET_LINES
)
# A turn's budget profile: the budgets it was held to (scenario profile or tenant override).
# Kept as one integer column per line (its budget, 0 when none), not as one text: building a
# text per turn cost more than the rest of the statement at 21.5M events.
_PROFILE_KEY = [f"profile_{line}_ms" for line in BUDGET_LINES]
_PROFILE_KEY_SQL = ", ".join(_PROFILE_KEY)
_PROFILE_KEY_COLUMNS = ", ".join(
    f"coalesce(turns.{line}_budget_ms, 0) as profile_{line}_ms" for line in BUDGET_LINES
)
_PROFILE_KEY_JOIN = " and ".join(f"final.{c} = profiles.{c}" for c in _PROFILE_KEY)


@cached
def latency_budget(version: str, filters: Filters, breakdown: str = "none") -> pd.DataFrame:
    """The latency budget table over the filtered turns: one row per budget profile, group of the
    breakdown and budget line, so every row has one budget (never a range).

    A profile is the set of budgets a turn is held to, named by the scenarios that use it (and
    marked when a tenant override set it). P50/P95 are linear interpolation over the turns'
    durations; the share over budget compares each turn with its budget; `p95_budget_ratio` is
    P95 / budget (over budget above 1). The provider of a turn is its LLM or realtime provider.
    """
    group = allowed(breakdown, BUDGET_BREAKDOWNS)
    where, params = session_filter(filters, alias="turns")
    if breakdown == "provider":
        # Only this breakdown needs each turn's provider: the usage lines of the filtered turns'
        # sessions (never the whole of fct_usage_lines), at most one row per turn.
        providers = f"""providers as (
            select
                session_id,
                turn_index,
                string_agg(distinct provider, ' + ' order by provider) as provider
            from marts.fct_usage_lines
            where component in ('llm', 'realtime') and turn_index is not null
                and session_id in (select turns.session_id from marts.fct_turn_latency as turns
                    where {where})
            group by session_id, turn_index
        ),"""
        provider_join = """left join providers
                on turns.session_id = providers.session_id
                and turns.turn_index = providers.turn_index"""
        params = [*params, *params]
    else:
        providers, provider_join = "", ""
    sql = f"""
        with {providers}
        turns as (
            select {_PROFILE_KEY_COLUMNS}, {group} as breakdown, turns.scenario,
                turns.budget_source, {_BUDGET_LINE_COLUMNS}
            from marts.fct_turn_latency as turns
            {provider_join}
            where {where}
        ),
        profiles as (
            select
                {_PROFILE_KEY_SQL},
                string_agg(distinct scenario, ', ' order by scenario)
                    || case when bool_or(budget_source = 'tenant_override')
                        then ' (tenant override)' else '' end as profile,
                list(distinct scenario order by scenario) as profile_scenarios,
                any_value(first_audio_budget_ms) as profile_first_audio_budget_ms
            from turns
            group by {_PROFILE_KEY_SQL}
        ),
        line_figures as (
            select {_PROFILE_KEY_SQL}, breakdown, {_budget_line_figures_sql()}
            from turns
            group by {_PROFILE_KEY_SQL}, breakdown
        ),
        final as ({_budget_lines_sql()}),
        owners as (select segment, owner from marts.dim_latency_budget_owners)
        select
            profiles.profile,
            profiles.profile_scenarios,
            final.* exclude ({_PROFILE_KEY_SQL}),
            final.p95_ms / nullif(final.budget_ms, 0) as p95_budget_ratio,
            owners.owner
        from final
        inner join profiles on {_PROFILE_KEY_JOIN}
        left join owners on final.segment = owners.segment
        order by profiles.profile_first_audio_budget_ms desc, profiles.profile, final.breakdown,
            final.segment_order
    """
    return run(version, sql, params)


# Complete turns, first-audio P50/P95 and the share over each turn's own budget: the headline and
# the day-by-day trend say the same figures.
FIRST_AUDIO_FIGURES = """
    count(first_audio_ms) as turns,
    round(quantile_cont(cast(first_audio_ms as double), [0.5, 0.95])[1], 3) as p50_ms,
    round(quantile_cont(cast(first_audio_ms as double), [0.5, 0.95])[2], 3) as p95_ms,
    count(*) filter (where is_first_audio_over_budget)
        / nullif(count(first_audio_ms), 0) as over_budget_share
"""


@cached
def first_audio_totals(version: str, filters: Filters) -> pd.DataFrame:
    """One row: complete turns, first-audio P50/P95 and the share over each turn's own budget."""
    where, params = session_filter(filters)
    sql = f"""
        select {FIRST_AUDIO_FIGURES}
        from marts.fct_turn_latency
        where {where}
    """
    return run(version, sql, params)


@cached
def first_audio_trend(version: str, filters: Filters) -> pd.DataFrame:
    """Per business date: complete turns, first-audio P50/P95 and the share over its budget."""
    where, params = session_filter(filters)
    sql = f"""
        select
            business_date, {FIRST_AUDIO_FIGURES}
        from marts.fct_turn_latency
        where {where} and first_audio_ms is not null
        group by business_date
        order by business_date
    """
    return run(version, sql, params)


# The rates of SPEC 6 over any filter combination: sums of the mart's numerators and denominators
# (the prefix cache is LLM and realtime input tokens together, as in the marts and the alerts).
EXPERIENCE_SUMS = """
    count(*) as sessions,
    coalesce(sum(turn_count), 0) as turns,
    coalesce(sum(interrupted_turns), 0) as interrupted_turns,
    coalesce(sum(false_interrupted_turns), 0) as false_interrupted_turns,
    coalesce(sum(input_tokens), 0) as input_tokens,
    coalesce(sum(cached_input_tokens), 0) as cached_input_tokens,
    coalesce(sum(tts_characters), 0) as tts_characters,
    coalesce(sum(cached_tts_characters), 0) as cached_tts_characters,
    coalesce(sum(vision_images), 0) as vision_images,
    coalesce(sum(cached_vision_images), 0) as cached_vision_images,
    coalesce(sum(degradation_count), 0) as degradations,
    count(*) filter (where is_degraded) as degraded_sessions,
    sum(interrupted_turns) / nullif(sum(turn_count), 0) as interruption_rate,
    sum(false_interrupted_turns) / nullif(sum(interrupted_turns), 0) as false_interruption_rate,
    sum(cached_input_tokens) / nullif(sum(input_tokens), 0) as prefix_cache_hit_rate,
    sum(cached_tts_characters) / nullif(sum(tts_characters), 0) as tts_phrase_cache_hit_rate,
    sum(cached_vision_images) / nullif(sum(vision_images), 0) as vision_cache_hit_rate,
    count(*) filter (where is_degraded) / nullif(count(*), 0) as degradation_rate
"""


@cached
def experience_totals(version: str, filters: Filters) -> pd.DataFrame:
    """One row: interruption, cache and degradation counts and rates of the filtered sessions."""
    where, params = session_filter(filters)
    sql = f"""
        select {EXPERIENCE_SUMS}
        from marts.fct_session_experience
        where {where}
    """
    return run(version, sql, params)


# The tables and figures of the headline pairs (this period and the comparison period).
_HEADLINES = {
    "experience": ("marts.fct_session_experience", EXPERIENCE_SUMS),
    "first_audio": ("marts.fct_turn_latency", FIRST_AUDIO_FIGURES),
}


@cached
def headline_pair(
    version: str, figures: str, filters: Filters, previous: Filters
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`experience_totals` (figures `experience`) or `first_audio_totals` (`first_audio`) of
    `filters` and of `previous`, in one statement instead of two."""
    table, select = _HEADLINES[allowed(figures, {k: k for k in _HEADLINES})]
    now, now_params = session_filter(filters)
    before, before_params = session_filter(previous)
    sql = f"""
        select 'now' as part, {select} from {table} where {now}
        union all
        select 'before' as part, {select} from {table} where {before}
    """
    parts = run_parts(
        version, sql, [*now_params, *before_params], {"now": frozenset(), "before": frozenset()}
    )
    return parts["now"], parts["before"]


@cached
def experience_daily(version: str, filters: Filters) -> pd.DataFrame:
    """The same counts and rates per business date, for trends."""
    where, params = session_filter(filters)
    sql = f"""
        select business_date, {EXPERIENCE_SUMS}
        from marts.fct_session_experience
        where {where}
        group by business_date
        order by business_date
    """
    return run(version, sql, params)


@cached
def degradations_by_kind(version: str, filters: Filters) -> pd.DataFrame:
    """Per degradation kind: events, degraded sessions and their share of the filtered sessions."""
    where, params = session_filter(filters, alias="sessions")
    kinds = "(values " + ", ".join(f"({literal(k)})" for k in DEGRADATION_KINDS) + ") as k(kind)"
    sql = f"""
        with filtered as (
            select sessions.session_id
            from marts.fct_session_ledger as sessions
            where {where}
        ),
        events as (
            select degradations.kind, degradations.session_id
            from marts.fct_degradations as degradations
            inner join filtered on degradations.session_id = filtered.session_id
        ),
        kinds as (select kind from {kinds})
        select
            kinds.kind,
            count(events.session_id) as degradations,
            count(distinct events.session_id) as degraded_sessions,
            count(distinct events.session_id)
                / nullif((select count(*) from filtered), 0) as degradation_rate
        from kinds
        left join events on kinds.kind = events.kind
        group by kinds.kind
        order by degradations desc, kinds.kind
    """
    return run(version, sql, params)


@cached
def concurrency_daily(version: str, filters: Filters) -> pd.DataFrame:
    """Per tenant and local date: peak and highest hourly P95 of concurrent sessions.

    Concurrency is a tenant's sessions across every scenario and pipeline (the all-pipelines
    rows, pipeline NULL: peaks of pipelines do not add up), so only the tenant and date filters
    apply.
    """
    clauses = ["business_date between ? and ?", "pipeline is null"]
    params: list = [filters.date_from, filters.date_to]
    if filters.tenants:
        clauses.append("list_contains(?::varchar[], tenant_id)")
        params.append(list(filters.tenants))
    sql = f"""
        select
            business_date,
            tenant_id,
            max(peak_concurrent_sessions) as peak_concurrent_sessions,
            max(p95_concurrent_sessions) as max_hourly_p95_concurrent_sessions
        from marts.fct_capacity_tenant_hourly
        where {" and ".join(clauses)}
        group by business_date, tenant_id
        order by business_date, tenant_id
    """
    return run(version, sql, params)
