"""What every page's queries share: the cache, the allow-lists, the sidebar filters as SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from ledger.core.vocabulary import COMPONENTS, SAVINGS_KINDS

if TYPE_CHECKING:  # for the annotations only
    from dashboards.filters import Filters

QUERY_TTL_SECONDS = 300
cached = st.cache_data(ttl=QUERY_TTL_SECONDS, max_entries=128, show_spinner=False)


def has_mart(version: str, mart: str) -> bool:
    """Whether the published copy has `marts.<mart>` (one built before the mart was added has not)."""
    from dashboards.connection import run

    found = run(
        version,
        "select count(*) as n from information_schema.tables "
        "where table_schema = 'marts' and table_name = ?",
        [mart],
    )
    return bool(found["n"].iloc[0])


def allowed(choice: str, allow_list: dict) -> str:
    """The allow-listed SQL for `choice`; anything else is refused before it nears a statement."""
    if choice not in allow_list:
        raise ValueError(f"{choice!r} is not one of {sorted(allow_list)}")
    return allow_list[choice]


def session_filter(filters: Filters, *, alias: str = "") -> tuple[str, list]:
    """The sidebar filters as a WHERE clause over a table with the session's columns.

    An empty selection means "all". Replayed copies (`is_replay`, SPEC 11) are left out unless the
    filters include them. The column names are fixed here, never taken from input.
    """
    prefix = f"{alias}." if alias else ""
    clauses = [f"{prefix}business_date between ? and ?"]
    if not filters.include_replays:
        clauses.append(f"not {prefix}is_replay")
    params: list = [filters.date_from, filters.date_to]
    for column, values in (
        ("tenant_id", filters.tenants),
        ("scenario", filters.scenarios),
        ("pipeline", filters.pipelines),
    ):
        if values:
            clauses.append(f"list_contains(?::varchar[], {prefix}{column})")
            params.append(list(values))
    return " and ".join(clauses), params


def sessions_cte(filters: Filters) -> tuple[str, list]:
    where, params = session_filter(filters)
    return f"sessions as (select * from marts.fct_session_ledger where {where})", params


_MONEY_SUMS = ",\n".join(
    [f"coalesce(sum({c}_cost), 0) as {c}_cost" for c in COMPONENTS]
    + [f"coalesce(sum({k}_cache_savings), 0) as {k}_cache_savings" for k in SAVINGS_KINDS]
)
# The money of a group of sessions, for every grain the pages show. Revenue sums the billed
# sessions (NULL when none is); total_cost counts every session, open ones included, as the
# margin marts do.
SESSION_AGGREGATES = f"""count(*) as sessions,
            sum(revenue) as revenue,
            coalesce(sum(total_cost), 0) as total_cost,
            sum(revenue) - coalesce(sum(total_cost), 0) as gross_margin,
            sum(billable_minutes) as billable_minutes,
            coalesce(sum(interruption_waste_cost), 0) as interruption_waste_cost,
            coalesce(sum(cache_savings), 0) as cache_savings,
            {_MONEY_SUMS}"""
# What a period's totals add to SESSION_AGGREGATES (the overview's and the margin's headline).
PERIOD_EXTRAS = """count(revenue) as billed_sessions,
            count(*) filter (where has_unpriced_usage) as sessions_with_unpriced_usage"""


def published_table(version: str, table: str) -> bool:
    """Whether the published copy has `marts.<table>` (the ops records are published once an
    alert run or a review has written them)."""
    from dashboards.connection import run

    found = run(
        version,
        "select count(*) as n from information_schema.tables "
        "where table_catalog = current_database() and table_schema = 'marts' "
        "and table_name = ?",
        [table],
    )
    return bool(found.at[0, "n"])
