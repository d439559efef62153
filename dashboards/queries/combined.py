"""The combined page: margin and experience side by side, one row per tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run
from dashboards.queries.common import allowed, cached, session_filter

if TYPE_CHECKING:
    from dashboards.filters import Filters

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


@cached
def combined_by_tenant(version: str, filters: Filters, sort: str, descending: bool) -> pd.DataFrame:
    """One row per tenant: margin and experience side by side, sorted by an allow-listed column.

    gross_margin_pct here only orders the rows; the page shows `ledger.core.ratios.gross_margin_pct`
    of the exact sums.
    """
    order = allowed(sort, COMBINED_SORTS)
    direction = "desc" if descending else "asc"
    where, params = session_filter(filters)
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
