"""The overview page: the period's totals, their daily (or hourly) trend."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run
from dashboards.queries.common import PERIOD_EXTRAS, SESSION_AGGREGATES, cached, sessions_cte

if TYPE_CHECKING:
    from dashboards.filters import Filters


@cached
def period_totals(version: str, filters: Filters) -> pd.DataFrame:
    """One row: the period's sessions, revenue, cost (and per component), waste and savings."""
    cte, params = sessions_cte(filters)
    sql = f"""
        with {cte}
        select
            {SESSION_AGGREGATES},
            {PERIOD_EXTRAS}
        from sessions
    """
    return run(version, sql, params)


@cached
def daily_trend(version: str, filters: Filters) -> pd.DataFrame:
    """Per business date: revenue, cost (and per component), gross margin, waste, savings."""
    cte, params = sessions_cte(filters)
    sql = f"""
        with {cte}
        select
            business_date,
            {SESSION_AGGREGATES}
        from sessions
        group by business_date
        order by business_date
    """
    return run(version, sql, params)


@cached
def hourly_trend(version: str, filters: Filters, timezone: str) -> pd.DataFrame:
    """Per hour of a one-day selection (session start, in the reporting `timezone`): the same
    figures as `daily_trend`, under `hour` (a whole day in days would be one point)."""
    cte, params = sessions_cte(filters)
    sql = f"""
        with {cte}
        select
            date_trunc('hour', timezone(?, timezone('UTC', started_at))) as hour,
            {SESSION_AGGREGATES}
        from sessions
        group by hour
        order by hour
    """
    return run(version, sql, [*params, timezone])
