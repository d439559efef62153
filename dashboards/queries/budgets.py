"""The spend budgets page (SPEC 13): each budget of a month with its month to date, forecast and
interval (ledger/finops/spend_budgets.py computes them, exact, from the two budget marts)."""

from __future__ import annotations

from datetime import date

import pandas as pd

from dashboards.connection import run
from dashboards.queries.common import cached, has_mart
from ledger.core.calendar import last_closed_day
from ledger.finops.spend_budgets import BUDGETS_SQL, DAILY_SQL, budget_outlooks, month_end

BUDGETS_MART = "dim_spend_budgets"


def has_budgets(version: str) -> bool:
    return has_mart(version, BUDGETS_MART)


@cached
def last_closed(version: str, timezone: str) -> date | None:
    """The data's newest complete business date (what the alerts check)."""
    newest = run(
        version,
        "select max(last_event_at) as newest from marts.fct_session_ledger where not is_replay",
    )["newest"].iloc[0]
    return None if pd.isna(newest) else last_closed_day(newest.to_pydatetime(), timezone)


@cached
def budgets(version: str, month: date, as_of: date) -> pd.DataFrame:
    """One row per budget of `month` seen on `as_of` (the month's end once it is over)."""
    seen_on = min(as_of, month_end(month))
    budget_rows = run(version, BUDGETS_SQL, [month])
    daily_rows = run(version, DAILY_SQL, [month, seen_on])
    outlooks = budget_outlooks(_rows(budget_rows), _rows(daily_rows), seen_on)
    return pd.DataFrame(
        [
            {
                "tenant_id": b.tenant_id,
                "provider": b.provider or "all providers",
                "budget": b.budget,
                "month_to_date": b.outlook.month_to_date,
                "forecast": b.outlook.forecast,
                "forecast_low": b.outlook.low,
                "forecast_high": b.outlook.high,
                "actual_pct": b.pct("actual"),
                "forecast_pct": b.pct("forecast"),
                "status": _status(b.crossed("actual"), b.crossed("forecast")),
                "days_remaining": b.outlook.days_remaining,
            }
            for b in outlooks
        ]
    )


@cached
def cumulative(version: str, tenant_id: str, month: date, as_of: date) -> pd.DataFrame:
    """A tenant's spend through the month, day by day, running total."""
    frame = run(
        version,
        """
        select business_date, sum(cost) as cost
        from marts.fct_spend_daily
        where provider is null and tenant_id = ? and business_date between ? and ?
        group by all order by business_date
        """,
        [tenant_id, month, min(as_of, month_end(month))],
    )
    if not frame.empty:
        frame["spent"] = frame["cost"].cumsum()
    return frame


def _rows(frame: pd.DataFrame) -> list[tuple]:
    # A NULL provider (the tenant's whole spend) comes back as NaN or None: None, so that it is
    # one key, and falsy.
    return [
        tuple(None if value is None or value is pd.NA or value != value else value for value in row)
        for row in frame.itertuples(index=False, name=None)
    ]


def _status(actual: object, forecast: object) -> str:
    if actual is not None:
        return f"spent {actual}% or more"
    if forecast is not None:
        return f"forecast at {forecast}% or more"
    return "within budget"
