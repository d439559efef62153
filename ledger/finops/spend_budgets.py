"""Spend budgets (SPEC 13): month-to-date spend against a tenant's monthly budget, a weekday-aware
forecast to the month's end with an interval, and the budget's crossings of 80% and 100%.

The forecast, in exact Decimal money (the reporting currency, 12 places, half-even where a mean is
taken):

- the month's days up to `as_of` (the newest closed business date) are observed; a day without
  spend counts as 0;
- each weekday's mean over the observed days of that weekday (Monday's spend is not Sunday's);
  a weekday not yet observed takes the mean of all observed days;
- forecast = month to date + the sum, over the remaining days, of their weekday's mean;
- the interval replaces each remaining day's mean by the lowest (and the highest) spend observed
  on that weekday (all observed days for a weekday not yet seen): the month as if every remaining
  day were like its cheapest (dearest) kind of day so far.

A month that is over has its actual spend as forecast, interval and all.
"""

from __future__ import annotations

import calendar
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_EVEN, Decimal

import duckdb

MONEY_PLACES = Decimal("0.000000000001")
HUNDRED = Decimal(100)
THRESHOLDS_PCT = (Decimal(80), Decimal(100))
BASES = ("actual", "forecast")
ZERO = Decimal(0)


def month_end(month: date) -> date:
    return month.replace(day=calendar.monthrange(month.year, month.month)[1])


def _mean(values: Sequence[Decimal]) -> Decimal:
    return (sum(values, ZERO) / len(values)).quantize(MONEY_PLACES, rounding=ROUND_HALF_EVEN)


@dataclass(frozen=True)
class MonthForecast:
    month_to_date: Decimal
    forecast: Decimal
    low: Decimal
    high: Decimal
    days_observed: int
    days_remaining: int


def forecast_month(daily: Mapping[date, Decimal], month: date, as_of: date) -> MonthForecast:
    """The forecast of `month` (its first day) seen on `as_of`, from the spend per day `daily`."""
    last = month_end(month)
    observed_until = min(as_of, last)
    days = [month + timedelta(days=n) for n in range((observed_until - month).days + 1)]
    spend = {day: daily.get(day, ZERO) for day in days}
    to_date = sum(spend.values(), ZERO)
    remaining = [
        observed_until + timedelta(days=n + 1) for n in range((last - observed_until).days)
    ]
    if not spend or not remaining:
        return MonthForecast(to_date, to_date, to_date, to_date, len(spend), len(remaining))
    by_weekday: dict[int, list[Decimal]] = {}
    for day, value in spend.items():
        by_weekday.setdefault(day.weekday(), []).append(value)
    every_day = list(spend.values())
    forecast = low = high = to_date
    for day in remaining:
        seen = by_weekday.get(day.weekday(), every_day)
        forecast += _mean(seen)
        low += min(seen)
        high += max(seen)
    return MonthForecast(to_date, forecast, low, high, len(spend), len(remaining))


@dataclass(frozen=True)
class SpendBudget:
    """One budget of one month, as seen on `as_of`."""

    tenant_id: str
    provider: str | None
    month: date
    as_of: date
    budget: Decimal  # reporting currency
    currency: str
    outlook: MonthForecast

    @property
    def scope(self) -> str:
        return self.tenant_id + (f" with {self.provider}" if self.provider else "")

    def pct(self, basis: str) -> Decimal | None:
        """`basis` (actual: month to date; forecast) as a percentage of the budget, exact."""
        if self.budget <= 0:
            return None
        value = self.outlook.month_to_date if basis == "actual" else self.outlook.forecast
        return value * HUNDRED / self.budget

    def crossed(self, basis: str) -> Decimal | None:
        """The highest threshold (80 or 100) the basis has reached, if any."""
        pct = self.pct(basis)
        reached = [t for t in THRESHOLDS_PCT if pct is not None and pct >= t]
        return max(reached) if reached else None


BUDGETS_SQL = """
    select tenant_id, provider, budget_amount, currency
    from marts.dim_spend_budgets
    where budget_month = ?
    order by tenant_id, provider nulls first
"""
DAILY_SQL = """
    select tenant_id, provider, business_date, sum(cost) as cost
    from marts.fct_spend_daily
    where business_date between ? and ?
    group by all
"""


def budget_outlooks(
    budgets: Sequence[tuple[str, str | None, Decimal, str]],
    daily_rows: Sequence[tuple[str, str | None, date, Decimal | None]],
    as_of: date,
) -> list[SpendBudget]:
    """Each budget row (tenant, provider, amount, currency) of `as_of`'s month with its outlook,
    from the daily spend rows (tenant, provider, business date, cost) of BUDGETS_SQL / DAILY_SQL."""
    month = as_of.replace(day=1)
    daily: dict[tuple[str, str | None], dict[date, Decimal]] = {}
    for tenant_id, provider, day, cost in daily_rows:
        daily.setdefault((tenant_id, provider), {})[day] = cost if cost is not None else ZERO
    return [
        SpendBudget(
            tenant_id,
            provider,
            month,
            as_of,
            budget,
            currency,
            forecast_month(daily.get((tenant_id, provider), {}), month, as_of),
        )
        for tenant_id, provider, budget, currency in budgets
    ]


def spend_budgets(con: duckdb.DuckDBPyConnection, as_of: date) -> list[SpendBudget]:
    """Every budget of `as_of`'s month with its month to date and forecast (marts
    dim_spend_budgets and fct_spend_daily, which `con` must see)."""
    month = as_of.replace(day=1)
    return budget_outlooks(
        con.execute(BUDGETS_SQL, [month]).fetchall(),
        con.execute(DAILY_SQL, [month, as_of]).fetchall(),
        as_of,
    )


def forecast_accuracy(
    con: duckdb.DuckDBPyConnection, month: date, days: Sequence[int] = (10, 15, 20)
) -> list[tuple[str, int, Decimal, Decimal, Decimal, bool]]:
    """For each tenant's whole spend in `month`: (tenant, day, forecast on that day, the month's
    actual, error % of the actual, actual inside the interval) - the benchmark of the forecast."""
    rows = con.execute(
        """
        select tenant_id, business_date, sum(cost)
        from marts.fct_spend_daily
        where provider is null and business_date between ? and ?
        group by all
        """,
        [month, month_end(month)],
    ).fetchall()
    daily: dict[str, dict[date, Decimal]] = {}
    for tenant_id, day, cost in rows:
        daily.setdefault(tenant_id, {})[day] = cost
    result = []
    for tenant_id, spend in sorted(daily.items()):
        actual = sum(spend.values(), ZERO)
        for day in days:
            seen = forecast_month(spend, month, month.replace(day=day))
            error = (seen.forecast - actual) * HUNDRED / actual if actual else ZERO
            result.append(
                (tenant_id, day, seen.forecast, actual, error, seen.low <= actual <= seen.high)
            )
    return result
