"""The session explorer: find a session, then its ledger row, usage lines, turns, interruptions
and degradations."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run
from dashboards.queries.common import allowed, cached, session_filter
from ledger.core.vocabulary import BUDGET_LINES, SEGMENTS

if TYPE_CHECKING:
    from dashboards.filters import Filters

__all__ = [
    "PAGE_SIZE",
    "SEGMENTS",
    "TRIAGE_FLAGS",
    "TRIAGE_SORTS",
    "count_sessions",
    "find_sessions",
    "session_degradations",
    "session_interruptions",
    "session_ledger_row",
    "session_lines",
    "session_turns",
]


# Triage flags a person can ask for (all must hold) -> the SQL condition on the joined row.
TRIAGE_FLAGS = {
    "negative_margin": "sessions.gross_margin < 0",
    "over_budget": "coalesce(turns.turns_over_budget, 0) > 0",
    "degraded": "sessions.degradation_count > 0",
    "unpriced": "sessions.has_unpriced_usage",
}
# Orders of the list -> SQL on the triaged rows (session_id breaks ties: pages never overlap).
TRIAGE_SORTS = {
    "newest": "started_at desc",
    "margin": "gross_margin asc nulls last",
    "cost": "total_cost desc nulls last",
    "over_budget": "turns_over_budget desc",
}
# The orders of columns of the session ledger alone (the others need the sessions' turn figures).
SESSION_SORTS = frozenset({"newest", "margin", "cost"})
# `slowest:<line>`: the sessions whose slowest turn is slowest on that budget line first.
SEGMENT_SORT = "slowest_{line}_ms desc nulls last"
PAGE_SIZE = 50


# The list's columns of the session ledger, and the turn figures joined to them.
_LISTED = """sessions.session_id, sessions.tenant_id, sessions.business_date,
                sessions.started_at, sessions.scenario, sessions.pipeline, sessions.end_reason,
                sessions.duration_seconds, sessions.turn_count, sessions.total_cost,
                sessions.revenue, sessions.gross_margin, sessions.interruption_count,
                sessions.degradation_count, sessions.has_unpriced_usage"""
_TURN_FIGURES = """coalesce(turns.turns_over_budget, 0) as turns_over_budget,
                turns.* exclude (session_id, turns_over_budget)"""


def _turns_cte(filters: Filters, session_text: str, within: str = "true") -> tuple[str, list]:
    """`turns as (...)`: each listed session's turn figures, from the turns of the sessions the
    list can hold (and `within`), not all of history."""
    where, params = _scope(filters, session_text)
    slowest = ",\n".join(f"max({line}_ms) as slowest_{line}_ms" for line in BUDGET_LINES)
    if session_text:
        # By id text at any date: the turns of the sessions that match.
        scope = f"""session_id in (
                select sessions.session_id from marts.fct_session_ledger as sessions
                where {where}
            )"""
    else:
        # A turn carries its session's tenant, date, scenario, pipeline and replay flag, so the
        # sidebar's filter selects the same turns directly, reading only the parts of its weeks
        # rather than the session ids of all of history.
        scope, _ = session_filter(filters)
    sql = f"""turns as (
            select
                session_id,
                count(*) filter (
                    where over_budget_segment_count > 0 or is_first_audio_over_budget
                ) as turns_over_budget,
                {slowest}
            from marts.fct_turn_latency
            where {scope} and {within}
            group by session_id
        )"""
    return sql, params


def _triage_sql(filters: Filters, session_text: str, flags: tuple[str, ...]) -> tuple[str, list]:
    """The joined sessions and their turn figures, filtered: the id text looks at every date."""
    turns, turn_params = _turns_cte(filters, session_text)
    conditions, params = _where(filters, session_text, flags)
    sql = f"""
        with {turns},
        triaged as (
            select {_LISTED}, {_TURN_FIGURES}
            from marts.fct_session_ledger as sessions
            left join turns on sessions.session_id = turns.session_id
            where {conditions}
        )
    """
    return sql, [*turn_params, *params]


def _scope(filters: Filters, session_text: str) -> tuple[str, list]:
    """The sessions the list looks at: the sidebar's, or by id text at any date."""
    if session_text:
        # Looking a session up by id should find it whatever period the sidebar shows.
        return "contains(lower(sessions.session_id), lower(?))", [session_text]
    return session_filter(filters, alias="sessions")


def _where(filters: Filters, session_text: str, flags: tuple[str, ...]) -> tuple[str, list]:
    """The list's condition on the joined row: its scope and every triage flag."""
    where, params = _scope(filters, session_text)
    return " and ".join([where, *(allowed(flag, TRIAGE_FLAGS) for flag in flags)]), params


@cached
def count_sessions(
    version: str, filters: Filters, session_text: str = "", flags: tuple[str, ...] = ()
) -> int:
    """How many sessions the triage list holds (every page of it)."""
    if "over_budget" in flags:
        sql, params = _triage_sql(filters, session_text, flags)
        sql += "select count(*) as n from triaged"
    else:
        # No flag looks at the turns: the list holds one row per matching session (the turn
        # figures join at most one row to each), so they are counted without them.
        where, params = _where(filters, session_text, flags)
        sql = f"select count(*) as n from marts.fct_session_ledger as sessions where {where}"
    return int(run(version, sql, params)["n"].iloc[0])


@cached
def find_sessions(
    version: str,
    filters: Filters,
    session_text: str = "",
    flags: tuple[str, ...] = (),
    sort: str = "newest",
    page: int = 1,
    page_size: int = PAGE_SIZE,
) -> pd.DataFrame:
    """One page of the sessions to triage: filtered by the sidebar (or by id text, any date) and
    the triage flags, ordered by an allow-listed sort (`slowest:<segment>` for a segment)."""
    if sort.startswith("slowest:"):
        order = SEGMENT_SORT.format(line=allowed(sort.removeprefix("slowest:"), _LINES))
    else:
        order = allowed(sort, TRIAGE_SORTS)
    page_size = int(page_size)
    window = [page_size, (max(int(page), 1) - 1) * page_size]
    if sort in SESSION_SORTS and "over_budget" not in flags:
        # Neither the order nor a flag looks at the turns: the page's sessions are picked from
        # the ledger first and only their turns are summed, not every turn of the period.
        conditions, params = _where(filters, session_text, flags)
        turns, turn_params = _turns_cte(
            filters, session_text, within="session_id in (select session_id from listed)"
        )
        sql = f"""
            with listed as (
                select {_LISTED}
                from marts.fct_session_ledger as sessions
                where {conditions}
                order by {order}, started_at desc, session_id
                limit ? offset ?
            ),
            {turns}
            select listed.*, {_TURN_FIGURES}
            from listed
            left join turns on listed.session_id = turns.session_id
            order by {order}, started_at desc, session_id
        """
        return run(version, sql, [*params, *window, *turn_params])
    sql, params = _triage_sql(filters, session_text, flags)
    sql += f"""
        select * from triaged
        order by {order}, started_at desc, session_id
        limit ? offset ?
    """
    return run(version, sql, [*params, *window])


_LINES = {line: line for line in BUDGET_LINES}


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
def session_turns(version: str, session_id: str, business_date: date) -> pd.DataFrame:
    """Each turn's five segments and budgets. `business_date` is the session's: a turn carries
    its session's, so only the parts of that week are read, not the turns of all history."""
    columns = ", ".join(f"{line}_ms, {line}_budget_ms" for line in BUDGET_LINES)
    sql = f"""
        select turn_index, segments_measured, {columns}, over_budget_segments,
            is_first_audio_over_budget
        from marts.fct_turn_latency
        where session_id = ? and business_date = ?
        order by turn_index
    """
    return run(version, sql, [session_id, business_date])


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
