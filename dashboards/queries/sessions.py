"""The session explorer: find a session, then its ledger row, usage lines, turns, interruptions
and degradations."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run
from dashboards.queries.common import cached, session_filter
from ledger.vocabulary import BUDGET_LINES, SEGMENTS

if TYPE_CHECKING:
    from dashboards.filters import Filters

__all__ = [
    "SEGMENTS",
    "find_sessions",
    "session_degradations",
    "session_interruptions",
    "session_ledger_row",
    "session_lines",
    "session_turns",
]


@cached
def find_sessions(
    version: str, filters: Filters, session_text: str, limit: int = 200
) -> pd.DataFrame:
    """Sessions to pick from, newest first: by id text (any date) or by the sidebar filters."""
    if session_text:
        # Looking a session up by id should find it whatever period the sidebar shows.
        where, params = "contains(lower(session_id), lower(?))", [session_text]
    else:
        where, params = session_filter(filters)
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
