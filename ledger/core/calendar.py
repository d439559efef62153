"""The reporting calendar, once: business dates in the reporting zone, ISO weeks, "yesterday".

Timestamps in the warehouse are naive UTC; a business date is the local date in the reporting
zone (`settings.timezone`), as the dbt macros of `dbt/macros/reporting_calendar.sql` compute it.

    >>> business_date(datetime(2026, 11, 22, 17, 0), "Asia/Shanghai")
    datetime.date(2026, 11, 23)
    >>> parse_iso_week("2026-W47")
    (datetime.date(2026, 11, 16), datetime.date(2026, 11, 22))
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")


class WeekError(ValueError):
    """Not an ISO week of the calendar."""


def utc_now(now: datetime | None = None) -> datetime:
    """`now` (default: the clock) as naive UTC, as the warehouse stores time."""
    return (now or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)


def business_date(moment: datetime | None, timezone: str) -> date:
    """The local date of `moment` (naive means UTC; default: now) in the reporting zone."""
    current = moment or datetime.now(UTC)
    if current.tzinfo is None:
        current = current.replace(tzinfo=UTC)
    return current.astimezone(ZoneInfo(timezone)).date()


def yesterday(timezone: str, now: datetime | None = None) -> date:
    """The business date a daily run checks: the day before today in the reporting zone."""
    return business_date(now, timezone) - timedelta(days=1)


def day_end_utc(day: date, timezone: str) -> datetime:
    """Naive UTC of the midnight after `day` in the reporting zone: the day's last moment."""
    local_midnight = datetime.combine(day + timedelta(days=1), time(0), tzinfo=ZoneInfo(timezone))
    return local_midnight.astimezone(ZoneInfo("UTC")).replace(tzinfo=None)


def last_closed_day(newest: datetime, timezone: str) -> date:
    """The newest business date that ended before `newest` (naive UTC): the data's newest day
    that is complete."""
    local = newest.replace(tzinfo=UTC).astimezone(ZoneInfo(timezone))
    candidate = local.date() - timedelta(days=1)
    while day_end_utc(candidate, timezone) > newest:  # pragma: no cover - defensive
        candidate -= timedelta(days=1)
    return candidate


def iso_week_of(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def parse_iso_week(text: str) -> tuple[date, date]:
    """'2026-W47' -> (Monday, Sunday)."""
    match = _WEEK.match(text.strip())
    if not match:
        raise WeekError(f"an ISO week looks like 2026-W47, got {text!r}")
    try:
        monday = date.fromisocalendar(int(match[1]), int(match[2]), 1)
    except ValueError as exc:
        raise WeekError(f"{text} is not a week of the ISO calendar") from exc
    return monday, monday + timedelta(days=6)


def previous_iso_week(timezone: str, now: datetime | None = None) -> str:
    """The last full ISO week before today in the reporting zone (what Monday's review covers)."""
    return iso_week_of(business_date(now, timezone) - timedelta(days=7))
