"""Every query the boards run, on the published copy.

Rules that keep them safe and cheap:
- values travel as parameters (`?`), never pasted into SQL text; the only text composed into a
  statement comes from the allow-lists below (column choices, segment names), checked first;
- each cached function takes every filter it applies as an argument, plus the version of the
  published file (`version`), so a new publish is a new cache key and stale entries age out by TTL;
- money comes back as exact Decimal; rounding for people happens in `dashboards.formatting`.
"""

from __future__ import annotations

from datetime import date

import pandas as pd
import streamlit as st

from dashboards.connection import run

QUERY_TTL_SECONDS = 300
cached = st.cache_data(ttl=QUERY_TTL_SECONDS, max_entries=128, show_spinner=False)

COMPONENTS = ("asr", "llm", "tts", "realtime", "vision", "infra")
SAVINGS_KINDS = ("llm", "realtime", "tts", "vision")
DEGRADATION_KINDS = (
    "realtime_to_cascade",
    "asr_to_dtmf",
    "tts_filler",
    "vision_clamp",
    "provider_failover",
)
# Pipeline order of a turn's segments; `first_audio` is their sum (SPEC 6).
SEGMENTS = ("endpointing", "stt_final", "llm_ttft", "tts_first_frame", "network_playback")
BUDGET_LINES = (*SEGMENTS, "first_audio")

# Allow-lists: a label a page may ask for -> the SQL it stands for.
PERIOD_GRAINS = {"day": "business_date", "week": "week_start_date"}
COST_BREAKDOWNS = {
    "component": ("component",),
    "provider": ("component", "provider"),
    "provider_model": ("component", "provider", "model"),
}
COMBINED_SORTS = {
    "tenant_id": "tenant_id",
    "revenue": "revenue",
    "total_cost": "total_cost",
    "gross_margin": "gross_margin",
    "gross_margin_pct": "gross_margin_pct",
    "interruption_waste_cost": "interruption_waste_cost",
    "cache_savings": "cache_savings",
    "false_interruption_rate": "false_interruption_rate",
    "prefix_cache_hit_rate": "prefix_cache_hit_rate",
    "interruption_rate": "interruption_rate",
    "first_audio_p95_ms": "first_audio_p95_ms",
}


def allowed(choice: str, allow_list: dict) -> str:
    """The allow-listed SQL for `choice`; anything else is refused before it nears a statement."""
    if choice not in allow_list:
        raise ValueError(f"{choice!r} is not one of {sorted(allow_list)}")
    return allow_list[choice]


def session_filter(
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
    *,
    alias: str = "",
) -> tuple[str, list]:
    """The sidebar filters as a WHERE clause over a table with the session's columns.

    An empty selection means "all". The column names are fixed here, never taken from input.
    """
    prefix = f"{alias}." if alias else ""
    clauses = [f"{prefix}business_date between ? and ?"]
    params: list = [date_from, date_to]
    for column, values in (
        ("tenant_id", tenants),
        ("scenario", scenarios),
        ("pipeline", pipelines),
    ):
        if values:
            clauses.append(f"list_contains(?::varchar[], {prefix}{column})")
            params.append(list(values))
    return " and ".join(clauses), params


def _sessions_cte(
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> tuple[str, list]:
    where, params = session_filter(date_from, date_to, tenants, scenarios, pipelines)
    return f"sessions as (select * from marts.fct_session_ledger where {where})", params


# ---- sidebar -----------------------------------------------------------------------------------


@cached
def filter_options(version: str) -> dict[str, list[str]]:
    """Distinct tenants, scenarios and pipelines of the ledger, for the sidebar."""
    options = {}
    for column in ("tenant_id", "scenario", "pipeline"):
        frame = run(
            version,
            f"select distinct {column} as value from marts.fct_session_ledger "
            f"where {column} is not null order by 1",
        )
        options[column] = frame["value"].tolist()
    return options


# ---- overview and margin -----------------------------------------------------------------------

_MONEY_SUMS = ",\n".join(
    [f"coalesce(sum({c}_cost), 0) as {c}_cost" for c in COMPONENTS]
    + [f"coalesce(sum({k}_cache_savings), 0) as {k}_cache_savings" for k in SAVINGS_KINDS]
)
# The money of a group of sessions, for every grain the pages show. Revenue sums the billed
# sessions (NULL when none is); total_cost counts every session, open ones included, as the
# margin marts do.
_SESSION_AGGREGATES = f"""count(*) as sessions,
            sum(revenue) as revenue,
            coalesce(sum(total_cost), 0) as total_cost,
            sum(revenue) - coalesce(sum(total_cost), 0) as gross_margin,
            sum(billable_minutes) as billable_minutes,
            coalesce(sum(interruption_waste_cost), 0) as interruption_waste_cost,
            coalesce(sum(cache_savings), 0) as cache_savings,
            {_MONEY_SUMS}"""


@cached
def period_totals(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """One row: the period's sessions, revenue, cost (and per component), waste and savings."""
    cte, params = _sessions_cte(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        with {cte}
        select
            {_SESSION_AGGREGATES},
            count(revenue) as billed_sessions,
            count(*) filter (where has_unpriced_usage) as sessions_with_unpriced_usage
        from sessions
    """
    return run(version, sql, params)


@cached
def daily_trend(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """Per business date: revenue, cost (and per component), gross margin, waste, savings."""
    cte, params = _sessions_cte(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        with {cte}
        select
            business_date,
            {_SESSION_AGGREGATES}
        from sessions
        group by business_date
        order by business_date
    """
    return run(version, sql, params)


@cached
def margin_by_tenant(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """Per tenant: sessions, billable minutes, revenue, cost per component, margin, waste, savings."""
    cte, params = _sessions_cte(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        with {cte}
        select
            tenant_id,
            {_SESSION_AGGREGATES}
        from sessions
        group by tenant_id
        order by tenant_id
    """
    return run(version, sql, params)


@cached
def margin_by_period(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
    grain: str,
) -> pd.DataFrame:
    """Per tenant and day (`grain` = day) or ISO week (week, keyed by its Monday)."""
    period = allowed(grain, PERIOD_GRAINS)
    cte, params = _sessions_cte(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        with {cte}
        select
            {period} as period_start,
            any_value(iso_week) as iso_week,
            tenant_id,
            {_SESSION_AGGREGATES}
        from sessions
        group by {period}, tenant_id
        order by period_start, tenant_id
    """
    return run(version, sql, params)


@cached
def cost_breakdown(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
    breakdown: str,
) -> pd.DataFrame:
    """Priced cost and cache savings of the filtered sessions' usage lines by component,
    provider or provider/model; unpriced lines are counted, never costed."""
    columns = ", ".join(f"lines.{c}" for c in allowed(breakdown, COST_BREAKDOWNS))
    where, params = session_filter(
        date_from, date_to, tenants, scenarios, pipelines, alias="sessions"
    )
    sql = f"""
        select
            {columns},
            coalesce(sum(lines.amount) filter (where lines.is_priced), 0) as cost,
            coalesce(sum(lines.savings_amount), 0) as cache_savings,
            count(*) filter (where not lines.is_priced) as unpriced_lines
        from marts.fct_usage_lines as lines
        inner join marts.fct_session_ledger as sessions
            on lines.session_id = sessions.session_id
        where {where}
        group by {columns}
        order by cost desc, {columns}
    """
    return run(version, sql, params)


@cached
def cost_by_phase_route(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """LLM cost, calls and tokens by session phase and model route (SPEC 6: judge phase routing)."""
    where, params = session_filter(
        date_from, date_to, tenants, scenarios, pipelines, alias="sessions"
    )
    sql = f"""
        select
            coalesce(lines.phase, '(none)') as phase,
            coalesce(lines.route, '(none)') as route,
            count(distinct lines.source || chr(31) || lines.event_id) as llm_calls,
            coalesce(sum(lines.quantity) filter (
                where lines.meter in ('llm.input_tokens', 'llm.cached_input_tokens')
            ), 0) as input_tokens,
            coalesce(sum(lines.quantity) filter (where lines.meter = 'llm.output_tokens'), 0)
                as output_tokens,
            coalesce(sum(lines.amount) filter (where lines.is_priced), 0) as llm_cost,
            coalesce(sum(lines.savings_amount), 0) as llm_cache_savings
        from marts.fct_usage_lines as lines
        inner join marts.fct_session_ledger as sessions
            on lines.session_id = sessions.session_id
        where lines.component = 'llm' and {where}
        group by all
        order by llm_cost desc, phase, route
    """
    return run(version, sql, params)


# ---- experience --------------------------------------------------------------------------------


def _budget_lines_sql() -> str:
    # One row per turn and budget line, from the wide fct_turn_latency; names come from BUDGET_LINES.
    return "\nunion all\n".join(
        f"select '{line}' as segment, {order} as segment_order, "
        f"cast({line}_ms as double) as duration_ms, {line}_budget_ms as budget_ms from turns"
        for order, line in enumerate(BUDGET_LINES, start=1)
    )


@cached
def latency_budget(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """The latency budget table over the filtered turns, as the seed draws it.

    P50/P95 are linear interpolation over the turns' durations; the share over budget compares
    each turn with its own budget; a line is over budget when the P95 of duration / own budget
    exceeds 1 (with one budget in play: P95 > budget).
    """
    where, params = session_filter(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        with turns as (select * from marts.fct_turn_latency where {where}),
        lines as ({_budget_lines_sql()}),
        owners as (select segment, owner from marts.dim_latency_budget_owners),
        final as (
            select
                lines.segment,
                lines.segment_order,
                min(lines.budget_ms) filter (where lines.duration_ms is not null) as min_budget_ms,
                max(lines.budget_ms) filter (where lines.duration_ms is not null) as max_budget_ms,
                count(lines.duration_ms) as measured_turns,
                round(quantile_cont(lines.duration_ms, 0.5), 3) as p50_ms,
                round(quantile_cont(lines.duration_ms, 0.95), 3) as p95_ms,
                count(*) filter (where lines.duration_ms > lines.budget_ms)
                    / nullif(count(lines.duration_ms), 0) as over_budget_share,
                quantile_cont(lines.duration_ms / lines.budget_ms, 0.95) as p95_budget_ratio
            from lines
            group by lines.segment, lines.segment_order
        )
        select final.*, owners.owner
        from final
        left join owners on final.segment = owners.segment
        order by final.segment_order
    """
    return run(version, sql, params)


@cached
def first_audio_trend(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """Per business date: complete turns, first-audio P50/P95 and the share over its budget."""
    where, params = session_filter(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        select
            business_date,
            count(first_audio_ms) as turns,
            round(quantile_cont(cast(first_audio_ms as double), 0.5), 3) as p50_ms,
            round(quantile_cont(cast(first_audio_ms as double), 0.95), 3) as p95_ms,
            count(*) filter (where is_first_audio_over_budget)
                / nullif(count(first_audio_ms), 0) as over_budget_share
        from marts.fct_turn_latency
        where {where} and first_audio_ms is not null
        group by business_date
        order by business_date
    """
    return run(version, sql, params)


_EXPERIENCE_SUMS = """
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
def experience_totals(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """One row: interruption, cache and degradation counts and rates of the filtered sessions."""
    where, params = session_filter(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        select {_EXPERIENCE_SUMS}
        from marts.fct_session_experience
        where {where}
    """
    return run(version, sql, params)


@cached
def experience_daily(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """The same counts and rates per business date, for trends."""
    where, params = session_filter(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        select business_date, {_EXPERIENCE_SUMS}
        from marts.fct_session_experience
        where {where}
        group by business_date
        order by business_date
    """
    return run(version, sql, params)


@cached
def degradations_by_kind(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """Per degradation kind: events, degraded sessions and their share of the filtered sessions."""
    where, params = session_filter(
        date_from, date_to, tenants, scenarios, pipelines, alias="sessions"
    )
    kinds = "(values " + ", ".join(f"('{kind}')" for kind in DEGRADATION_KINDS) + ") as k(kind)"
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
def concurrency_daily(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
) -> pd.DataFrame:
    """Per tenant and local date: peak and highest hourly P95 of concurrent sessions.

    Concurrency is a tenant's paths across every scenario and pipeline (ASR/TTS pools scale on
    them), so only the tenant and date filters apply.
    """
    clauses = ["business_date between ? and ?"]
    params: list = [date_from, date_to]
    if tenants:
        clauses.append("list_contains(?::varchar[], tenant_id)")
        params.append(list(tenants))
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


# ---- combined ----------------------------------------------------------------------------------


@cached
def combined_by_tenant(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
    sort: str,
    descending: bool,
) -> pd.DataFrame:
    """One row per tenant: margin and experience side by side, sorted by an allow-listed column."""
    order = allowed(sort, COMBINED_SORTS)
    direction = "desc" if descending else "asc"
    where, params = session_filter(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        with money as (
            select
                tenant_id,
                count(*) as sessions,
                sum(billable_minutes) as billable_minutes,
                sum(revenue) as revenue,
                coalesce(sum(total_cost), 0) as total_cost,
                sum(revenue) - coalesce(sum(total_cost), 0) as gross_margin,
                coalesce(sum(interruption_waste_cost), 0) as interruption_waste_cost,
                coalesce(sum(cache_savings), 0) as cache_savings
            from marts.fct_session_ledger
            where {where}
            group by tenant_id
        ),
        experience as (
            select
                tenant_id,
                sum(interrupted_turns) / nullif(sum(turn_count), 0) as interruption_rate,
                sum(false_interrupted_turns) / nullif(sum(interrupted_turns), 0)
                    as false_interruption_rate,
                sum(cached_input_tokens) / nullif(sum(input_tokens), 0) as prefix_cache_hit_rate,
                sum(cached_tts_characters) / nullif(sum(tts_characters), 0)
                    as tts_phrase_cache_hit_rate,
                count(*) filter (where is_degraded) / nullif(count(*), 0) as degradation_rate
            from marts.fct_session_experience
            where {where}
            group by tenant_id
        ),
        latency as (
            select
                tenant_id,
                round(quantile_cont(cast(first_audio_ms as double), 0.95), 3)
                    as first_audio_p95_ms
            from marts.fct_turn_latency
            where {where}
            group by tenant_id
        ),
        final as (
            select
                money.*,
                round(100 * money.gross_margin / nullif(money.revenue, 0), 6)
                    as gross_margin_pct,
                experience.interruption_rate,
                experience.false_interruption_rate,
                experience.prefix_cache_hit_rate,
                experience.tts_phrase_cache_hit_rate,
                experience.degradation_rate,
                latency.first_audio_p95_ms
            from money
            left join experience on money.tenant_id = experience.tenant_id
            left join latency on money.tenant_id = latency.tenant_id
        )
        select * from final
        order by {order} {direction} nulls last, tenant_id
    """
    return run(version, sql, params * 3)


# ---- session explorer --------------------------------------------------------------------------


@cached
def find_sessions(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
    session_text: str,
    limit: int = 200,
) -> pd.DataFrame:
    """Sessions to pick from, newest first: by id text (any date) or by the sidebar filters."""
    if session_text:
        # Looking a session up by id should find it whatever period the sidebar shows.
        where, params = "contains(lower(session_id), lower(?))", [session_text]
    else:
        where, params = session_filter(date_from, date_to, tenants, scenarios, pipelines)
    sql = f"""
        select
            session_id, tenant_id, business_date, started_at, scenario, pipeline, end_reason,
            duration_seconds, turn_count, total_cost, revenue, gross_margin,
            interruption_count, degradation_count, has_unpriced_usage
        from marts.fct_session_ledger
        where {where}
        order by started_at desc, session_id
        limit ?
    """
    return run(version, sql, [*params, int(limit)])


@cached
def session_ledger_row(version: str, session_id: str) -> pd.DataFrame:
    return run(version, "select * from marts.fct_session_ledger where session_id = ?", [session_id])


@cached
def session_lines(version: str, session_id: str) -> pd.DataFrame:
    """The session's priced usage lines (one per event and meter)."""
    sql = """
        select
            occurred_at, turn_index, component, provider, model, phase, route, meter, quantity,
            is_cache_hit, billed_quantity, unit_price_reporting, is_priced, unpriced_reason,
            amount, savings_kind, savings_amount
        from marts.fct_usage_lines
        where session_id = ?
        order by occurred_at, source, event_id, meter
    """
    return run(version, sql, [session_id])


@cached
def session_turns(version: str, session_id: str) -> pd.DataFrame:
    """Each turn's five segments and budgets."""
    columns = ", ".join(f"{line}_ms, {line}_budget_ms" for line in BUDGET_LINES)
    sql = f"""
        select turn_index, segments_measured, {columns}, over_budget_segments,
            is_first_audio_over_budget
        from marts.fct_turn_latency
        where session_id = ?
        order by turn_index
    """
    return run(version, sql, [session_id])


@cached
def session_interruptions(version: str, session_id: str) -> pd.DataFrame:
    sql = """
        select occurred_at, turn_index, is_false_interruption, wasted_output_tokens,
            wasted_tts_characters, is_priced, unpriced_reason, waste_amount
        from marts.fct_interruptions
        where session_id = ?
        order by occurred_at, source, event_id
    """
    return run(version, sql, [session_id])


@cached
def session_degradations(version: str, session_id: str) -> pd.DataFrame:
    sql = """
        select occurred_at, kind, turn_index, reason
        from marts.fct_degradations
        where session_id = ?
        order by occurred_at, source, event_id
    """
    return run(version, sql, [session_id])


# ---- data quality ------------------------------------------------------------------------------


@cached
def quarantine_by_reason(version: str) -> pd.DataFrame:
    sql = """
        select reason, count(*) as rows, count(distinct file) as files
        from marts.fct_quarantined_rows
        group by reason
        order by rows desc, reason
    """
    return run(version, sql)


@cached
def quarantine_by_file(version: str) -> pd.DataFrame:
    sql = """
        select file as source_file, reason, count(*) as rows, min(line) as first_line
        from marts.fct_quarantined_rows
        group by file, reason
        order by file, rows desc, reason
    """
    return run(version, sql)


@cached
def unpriced_usage(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    """Usage lines with no price in effect, grouped by what is missing from the rate card."""
    where, params = session_filter(
        date_from, date_to, tenants, scenarios, pipelines, alias="sessions"
    )
    sql = f"""
        select
            lines.component, lines.provider, lines.model, lines.meter, lines.unpriced_reason,
            count(*) as lines,
            sum(lines.quantity) as quantity,
            count(distinct lines.session_id) as sessions,
            min(lines.occurred_at) as first_at,
            max(lines.occurred_at) as last_at
        from marts.fct_usage_lines as lines
        inner join marts.fct_session_ledger as sessions
            on lines.session_id = sessions.session_id
        where not lines.is_priced and {where}
        group by all
        order by lines desc, lines.component, lines.provider, lines.model, lines.meter
    """
    return run(version, sql, params)


@cached
def unpriced_interruptions(
    version: str,
    date_from: date,
    date_to: date,
    tenants: tuple[str, ...],
    scenarios: tuple[str, ...],
    pipelines: tuple[str, ...],
) -> pd.DataFrame:
    where, params = session_filter(
        date_from, date_to, tenants, scenarios, pipelines, alias="sessions"
    )
    sql = f"""
        select waste.unpriced_reason, count(*) as interruptions
        from marts.fct_interruptions as waste
        inner join marts.fct_session_ledger as sessions
            on waste.session_id = sessions.session_id
        where not waste.is_priced and {where}
        group by all
        order by interruptions desc, waste.unpriced_reason
    """
    return run(version, sql, params)


@cached
def ingested_files(version: str) -> pd.DataFrame:
    sql = """
        select path, rows, accepted, duplicates, quarantined, ingested_at
        from marts.fct_ingested_files
        order by ingested_at desc, path
    """
    return run(version, sql)


@cached
def reference_meta(version: str) -> pd.DataFrame:
    return run(version, "select * from marts.dim_reference_meta")
