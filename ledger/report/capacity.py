"""The week's pool capacity for the weekly review (SPEC 11, seed 8.2), from
`marts.fct_capacity_pool_weekly`: all tenants together first, then each tenant."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import duckdb

from ledger.core.vocabulary import CAPACITY_POOL_WEEKLY_MART, POOL_LOAD_FIGURES
from ledger.serving.published_copy import has_mart

CAPACITY_MART = CAPACITY_POOL_WEEKLY_MART
GIB = Decimal(2) ** 30


@dataclass(frozen=True)
class CapacityWeek:
    scope: str  # a tenant id, or "all tenants"
    llm_tokens_per_second_peak: Decimal
    llm_tokens_per_second_p95: Decimal
    llm_peak_change_pct: Decimal | None
    encoder_images_per_second_peak: Decimal
    encoder_images_per_second_p95: Decimal
    peak_concurrent_paths: int | None
    vision_cache_hit_pct: Decimal | None
    vision_cache_gib: Decimal | None
    encoder_images_per_second_saved_per_10_points: Decimal


def _decimal(value: float | None) -> Decimal | None:
    # The mart's loads are DOUBLE rounded to 6 places: their shortest repr is that decimal.
    return None if value is None else Decimal(repr(value))


def load_capacity(con: duckdb.DuckDBPyConnection, iso_week: str) -> list[CapacityWeek]:
    if not has_mart(con, CAPACITY_MART):
        return []
    rows = con.execute(
        f"""
        select
            coalesce(tenant_id, 'all tenants'),
            {", ".join(POOL_LOAD_FIGURES)},
            cached_vision_images,
            vision_images,
            vision_cache_bytes,
            encoder_images_per_second_saved_per_10_points,
        from marts.{CAPACITY_MART}
        where iso_week = ?
        order by scope, tenant_id
        """,
        [iso_week],
    ).fetchall()
    weeks = []
    for (scope, llm_peak, llm_p95, change, enc_peak, enc_p95, paths, cached, images,
         cache_bytes, saved) in rows:  # fmt: skip
        weeks.append(
            CapacityWeek(
                scope,
                _decimal(llm_peak),
                _decimal(llm_p95),
                _decimal(change),
                _decimal(enc_peak),
                _decimal(enc_p95),
                paths,
                Decimal(100) * cached / images if images else None,
                None if cache_bytes is None else Decimal(cache_bytes) / GIB,
                _decimal(saved),
            )
        )
    return weeks
