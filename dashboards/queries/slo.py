"""The latency SLO page (SPEC 13): each SLO's SLI and error budget, the burn-rate rules that fire,
each owner team's SLOs, and the leverage of each segment."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run
from dashboards.queries.common import cached, has_mart

if TYPE_CHECKING:
    from dashboards.filters import Filters

SLO_MART = "fct_latency_slo"


def has_slos(version: str) -> bool:
    return has_mart(version, SLO_MART)


def _tenants(filters: Filters, tenants: tuple[str, ...]) -> tuple[str, list]:
    chosen = filters.tenants or tenants
    if not chosen:
        return "true", []
    return "list_contains(?::varchar[], tenant_id)", [list(chosen)]


@cached
def slos(version: str, filters: Filters, tenants: tuple[str, ...] = ()) -> pd.DataFrame:
    where, params = _tenants(filters, tenants)
    return run(
        version,
        f"""
        select profile, tenant_id, segment, owner, objective, window_days, evaluated_at, turns,
            bad_turns, sli, error_budget_turns, error_budget_remaining, is_objective_met
        from marts.{SLO_MART}
        where {where}
        order by error_budget_remaining, tenant_id, profile, segment_order
        """,
        params,
    )


@cached
def burning(version: str, filters: Filters, tenants: tuple[str, ...] = ()) -> pd.DataFrame:
    where, params = _tenants(filters, tenants)
    return run(
        version,
        f"""
        select tenant_id, profile, segment, owner, rule_name, severity, factor, long_burn_rate,
            short_burn_rate, long_turns, short_turns
        from marts.fct_latency_burn_rates
        where is_firing and {where}
        order by severity = 'page' desc, long_burn_rate desc
        """,
        params,
    )


@cached
def owners(version: str) -> pd.DataFrame:
    return run(
        version,
        """
        select owner, profile, segment, tenants, tenants_missing_objective, turns, bad_turns, sli,
            objective, error_budget_remaining
        from marts.fct_latency_slo_owner
        order by owner, profile, segment_order
        """,
    )


@cached
def leverage(version: str, filters: Filters, tenants: tuple[str, ...] = ()) -> pd.DataFrame:
    where, params = _tenants(filters, tenants)
    return run(
        version,
        f"""
        select profile, tenant_id, segment, owner, p95_rank, p50_rank, p50_ms, p95_ms,
            p50_share, p95_share, budget_ms, budget_share, turns
        from marts.fct_latency_leverage
        where {where}
        order by tenant_id, profile, p95_rank
        """,
        params,
    )
