"""SPEC 13 spend budgets: the weekday-aware forecast and its interval against a hand-computed
month, in exact Decimal money, and the 80% / 100% crossings of actual and forecast."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from ledger.finops.spend_budgets import MonthForecast, SpendBudget, forecast_month

NOVEMBER = date(2026, 11, 1)  # a Sunday; the month has 30 days
D = Decimal

# Spend per business date to Tuesday 2026-11-10 (Friday the 6th had none: it counts as 0).
SPEND = {
    date(2026, 11, 1): D("4.00"),  # Sun
    date(2026, 11, 2): D("10.00"),  # Mon
    date(2026, 11, 3): D("10.00"),  # Tue
    date(2026, 11, 4): D("11.00"),  # Wed
    date(2026, 11, 5): D("9.00"),  # Thu
    date(2026, 11, 7): D("3.00"),  # Sat
    date(2026, 11, 8): D("5.00"),  # Sun
    date(2026, 11, 9): D("12.00"),  # Mon
    date(2026, 11, 10): D("10.01"),  # Tue
    date(2026, 11, 12): D("99.00"),  # after as_of: not seen yet
}


def test_the_forecast_on_day_10_is_the_hand_computed_one() -> None:
    # Month to date: 4 + 10 + 10 + 11 + 9 + 0 + 3 + 5 + 12 + 10.01 = 74.01.
    # Weekday means (min, max): Sun 4.5 (4, 5), Mon 11 (10, 12), Tue 10.005 (10, 10.01),
    # Wed 11, Thu 9, Fri 0, Sat 3. The 20 days left (11-30): 3 each of Wed..Mon, 2 Tuesdays.
    # forecast = 74.01 + 3 x (11 + 9 + 0 + 3 + 4.5 + 11) + 2 x 10.005 = 74.01 + 115.5 + 20.01
    # low      = 74.01 + 3 x (11 + 9 + 0 + 3 + 4 + 10) + 2 x 10 = 74.01 + 111 + 20
    # high     = 74.01 + 3 x (11 + 9 + 0 + 3 + 5 + 12) + 2 x 10.01 = 74.01 + 120 + 20.02
    assert forecast_month(SPEND, NOVEMBER, date(2026, 11, 10)) == MonthForecast(
        month_to_date=D("74.01"),
        forecast=D("209.520000000000"),
        low=D("205.01"),
        high=D("214.03"),
        days_observed=10,
        days_remaining=20,
    )


def test_a_weekday_mean_is_rounded_half_even_to_12_places() -> None:
    # Sundays 1, 1, 2: mean 4/3 = 1.333333333333 (12 places); the other days spend nothing.
    # To the 15th: 4 spent; Sundays 22 and 29 remain: 4 + 2 x 1.333333333333.
    sundays = {date(2026, 11, 1): D(1), date(2026, 11, 8): D(1), date(2026, 11, 15): D(2)}
    assert forecast_month(sundays, NOVEMBER, date(2026, 11, 15)) == MonthForecast(
        D(4), D("6.666666666666"), D(6), D(8), 15, 15
    )


def test_a_month_that_is_over_forecasts_what_it_spent() -> None:
    over = forecast_month(SPEND, NOVEMBER, date(2026, 12, 3))
    assert (over.forecast, over.low, over.high, over.days_remaining) == (
        D("173.01"),
        D("173.01"),
        D("173.01"),
        0,
    )


def _budget(amount: str) -> SpendBudget:
    outlook = forecast_month(SPEND, NOVEMBER, date(2026, 11, 10))
    return SpendBudget("bright-bank", None, NOVEMBER, date(2026, 11, 10), D(amount), "CNY", outlook)


def test_crossings_at_80_and_100_percent_of_actual_and_forecast() -> None:
    # 74.01 of 250 is 29.604%; the forecast 209.52 is 83.808% of it: forecast past 80%.
    generous = _budget("250")
    assert (generous.pct("actual"), generous.pct("forecast")) == (D("29.604"), D("83.808"))
    assert (generous.crossed("actual"), generous.crossed("forecast")) == (None, D(80))
    # Of 200: forecast 104.76%, past 100%. Of 90: 82.23% already spent.
    assert _budget("200").crossed("forecast") == D(100)
    tight = _budget("90")
    assert (tight.crossed("actual"), tight.crossed("forecast")) == (D(80), D(100))
