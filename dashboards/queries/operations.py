"""The operations page: shadow-mode verdicts and pool capacity (SPEC 11).

Verdicts and capacity tables are weekly: a week is shown when it overlaps the sidebar's period (its
quantiles and its verdict hold for the whole week, never for a slice of it). The day-by-day
endpointing change and the hourly pool load follow the period exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run
from dashboards.queries.common import cached
from ledger.core.vocabulary import CAPACITY_POOL_WEEKLY_MART, POOL_LOAD_FIGURES

if TYPE_CHECKING:
    from dashboards.filters import Filters

SHADOW_MART = "fct_shadow_comparison_weekly"
SHADOW_DAILY_MART = "fct_shadow_comparison_daily"
CAPACITY_MART = CAPACITY_POOL_WEEKLY_MART
CAPACITY_HOURLY_MART = "fct_capacity_pool_hourly"

# The verdicts of the mart (SPEC 11 vocabulary) as the page says them.
VERDICT_LABELS = {"switch": "switch", "keep": "don't", "insufficient": "not enough turns yet"}


def _weeks(filters: Filters) -> tuple[str, list]:
    return "week_start_date between ? - interval 6 day and ?", [filters.date_from, filters.date_to]


def _has(version: str, mart: str) -> bool:
    found = run(
        version,
        "select count(*) as n from information_schema.tables "
        "where table_schema = 'marts' and table_name = ?",
        [mart],
    )
    return bool(found["n"].iloc[0])


@cached
def shadow_weekly(version: str, filters: Filters) -> pd.DataFrame:
    """One row per ISO week, tenant, scenario and candidate."""
    if not _has(version, SHADOW_MART):
        return pd.DataFrame()
    where, params = _weeks(filters)
    for column, values in (("tenant_id", filters.tenants), ("scenario", filters.scenarios)):
        if values:
            where += f" and list_contains(?::varchar[], {column})"
            params.append(list(values))
    frame = run(
        version,
        f"""
        select
            iso_week, tenant_id, scenario, candidate, kind, compared_turns, min_turns, verdict,
            production_endpointing_p50_ms, candidate_endpointing_p50_ms,
            production_endpointing_p95_ms, candidate_endpointing_p95_ms,
            production_first_audio_p95_ms, candidate_first_audio_p95_ms,
            production_false_interruption_rate, candidate_false_interruption_rate,
            endpointing_faster_turns, endpointing_slower_turns, endpointing_p_value,
            endpointing_delta_median_ms, endpointing_delta_ci_low_ms, endpointing_delta_ci_high_ms,
            false_interruptions_avoided, false_interruptions_added, false_interruption_p_value,
            waste_avoided_cost, waste_added_cost, waste_net_cost
        from marts.{SHADOW_MART}
        where {where}
        order by iso_week, tenant_id, scenario, candidate, kind
        """,
        params,
    )
    if not frame.empty:
        frame["verdict_label"] = frame["verdict"].map(VERDICT_LABELS)
    return frame


@cached
def capacity_weekly(version: str, filters: Filters) -> pd.DataFrame:
    """One row per ISO week and scope: all tenants (only when no tenant is selected), then each."""
    if not _has(version, CAPACITY_MART):
        return pd.DataFrame()
    where, params = _weeks(filters)
    if filters.tenants:
        where += " and list_contains(?::varchar[], tenant_id)"
        params.append(list(filters.tenants))
    return run(
        version,
        f"""
        select
            iso_week,
            coalesce(tenant_id, 'all tenants') as pool_load_of,
            {", ".join(POOL_LOAD_FIGURES)},
            concurrent_paths_p95_hourly_peak,
            peak_concurrent_sessions,
            peak_concurrent_realtime_sessions,
            vision_cache_hit_rate,
            vision_cache_bytes / 1073741824 as vision_cache_gib,
            encoder_images_per_second_saved_per_10_points
        from marts.{CAPACITY_MART}
        where {where}
        order by iso_week, scope, tenant_id
        """,
        params,
    )


@cached
def shadow_daily(version: str, filters: Filters) -> pd.DataFrame:
    """Per business day, tenant, scenario and candidate: the median endpointing change."""
    if not _has(version, SHADOW_DAILY_MART):
        return pd.DataFrame()
    where, params = "business_date between ? and ?", [filters.date_from, filters.date_to]
    for column, values in (("tenant_id", filters.tenants), ("scenario", filters.scenarios)):
        if values:
            where += f" and list_contains(?::varchar[], {column})"
            params.append(list(values))
    return run(
        version,
        f"""
        select
            business_date, tenant_id || ' / ' || scenario || ' / ' || candidate as comparison,
            compared_turns, endpointing_delta_median_ms
        from marts.{SHADOW_DAILY_MART}
        where {where}
        order by business_date, comparison
        """,
        params,
    )


@cached
def capacity_hourly(version: str, filters: Filters) -> pd.DataFrame:
    """Per local hour: the peak 1-minute LLM tokens/s and encoder images/s, all tenants together
    when no tenant is selected, else each selected tenant."""
    if not _has(version, CAPACITY_HOURLY_MART):
        return pd.DataFrame()
    where, params = "business_date between ? and ?", [filters.date_from, filters.date_to]
    if filters.tenants:
        where += " and scope = 'tenant' and list_contains(?::varchar[], tenant_id)"
        params.append(list(filters.tenants))
    else:
        where += " and scope = 'overall'"
    return run(
        version,
        f"""
        select
            local_hour_start,
            coalesce(tenant_id, 'all tenants') as pool_load_of,
            llm_tokens_per_second_peak,
            encoder_images_per_second_peak
        from marts.{CAPACITY_HOURLY_MART}
        where {where}
        order by local_hour_start, pool_load_of
        """,
        params,
    )
