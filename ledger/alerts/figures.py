"""Read the daily figures anomaly detection needs from the marts, and how fresh they are.

Everything here is I/O at the edge: SQL in, `TenantDay` rows and a `Freshness` verdict out, with the
money kept as Decimal exactly as DuckDB holds it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

import duckdb

from ledger.alerts.detection import ComponentDay, TenantDay
from ledger.core.calendar import day_end_utc, last_closed_day
from ledger.core.ratios import ratio
from ledger.core.vocabulary import COMPONENTS

ZERO = Decimal(0)

# A tenant "usually has traffic" when it had sessions on this many of the 7 days before.
USUAL_TRAFFIC_DAYS = 5


class MartsMissingError(RuntimeError):
    """The warehouse has no marts yet."""


def require_marts(con: duckdb.DuckDBPyConnection, warehouse: str) -> None:
    found = con.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'marts' and table_name = 'fct_session_ledger'"
    ).fetchone()[0]
    if not found:
        raise MartsMissingError(
            f"the warehouse {warehouse} has no marts yet: run `ledger build` first "
            "(or `ledger simulate` then `ledger build` for sample data)"
        )


_DAY_FIGURES_SQL = """
    select
        tenant_id,
        business_date,
        count(*) as sessions,
        coalesce(sum(billable_minutes), 0) as billable_minutes,
        coalesce(sum(revenue), 0) as revenue,
        coalesce(sum(total_cost), 0) as total_cost,
        {component_columns}
    from marts.fct_session_ledger
    where business_date between ? and ?
        and not is_replay
    group by tenant_id, business_date
    order by tenant_id, business_date
"""

_PROVIDER_COSTS_SQL = """
    select
        sessions.tenant_id,
        sessions.business_date,
        lines.component,
        lines.provider,
        lines.model,
        sum(lines.amount) as cost,
        count(distinct lines.session_id) as sessions,
    from marts.fct_usage_lines as lines
    inner join marts.fct_session_ledger as sessions
        on lines.session_id = sessions.session_id
    where sessions.business_date between ? and ?
        and not sessions.is_replay
        and lines.amount is not null
    group by all
"""

# Replayed copies (`ledger replay`, SPEC 11) are load, never revenue: every figure here is of
# recorded traffic (fct_experience_tenant_daily holds recorded traffic only).

# The cache hit rates of SPEC 6 with the numerators and denominators the boards divide too
# (fct_experience_tenant_daily): the prefix cache is LLM and realtime input tokens together, so
# an anomaly on either component is explained by the same rate the boards show.
_CACHE_SQL = """
    select
        tenant_id,
        business_date,
        cached_input_tokens,
        input_tokens,
        cached_tts_characters,
        tts_characters,
        cached_vision_images,
        vision_images,
    from marts.fct_experience_tenant_daily
    where business_date between ? and ?
"""

# component -> the (numerator, denominator) columns of its cache hit rate.
_CACHE_RATES = {
    "llm": ("cached_input_tokens", "input_tokens"),
    "realtime": ("cached_input_tokens", "input_tokens"),
    "tts": ("cached_tts_characters", "tts_characters"),
    "vision": ("cached_vision_images", "vision_images"),
}


def _component_columns() -> str:
    parts = []
    for name in COMPONENTS:
        parts += [
            f"coalesce(sum({name}_cost), 0) as {name}_cost",
            f"coalesce(sum(billable_minutes) filter (where {name}_cost > 0), 0) as {name}_minutes",
            f"count(*) filter (where {name}_cost > 0) as {name}_sessions",
        ]
    return ",\n        ".join(parts)


def load_tenant_days(con: duckdb.DuckDBPyConnection, first: date, last: date) -> list[TenantDay]:
    """Every tenant's figures for each business day in [first, last] that had sessions."""
    cursor = con.execute(
        _DAY_FIGURES_SQL.format(component_columns=_component_columns()), [first, last]
    )
    names = [column[0] for column in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    providers: dict[tuple[str, date], dict[tuple[str, str, str], Decimal]] = {}
    provider_sessions: dict[tuple[str, date], dict[tuple[str, str, str], int]] = {}
    for tenant, day, component, provider, model, cost, sessions in con.execute(
        _PROVIDER_COSTS_SQL, [first, last]
    ).fetchall():
        providers.setdefault((tenant, day), {})[(component, provider, model)] = cost
        provider_sessions.setdefault((tenant, day), {})[(component, provider, model)] = sessions
    caches: dict[tuple[str, date], dict[str, Decimal]] = {}
    cursor = con.execute(_CACHE_SQL, [first, last])
    cache_names = [column[0] for column in cursor.description]
    for values in cursor.fetchall():
        counts = dict(zip(cache_names, values, strict=True))
        rates = caches.setdefault((counts["tenant_id"], counts["business_date"]), {})
        for component, (cached, cacheable) in _CACHE_RATES.items():
            rate = ratio(counts[cached], counts[cacheable])
            if rate is not None:
                rates[component] = rate
    return [
        TenantDay(
            tenant_id=row["tenant_id"],
            business_date=row["business_date"],
            sessions=int(row["sessions"]),
            billable_minutes=row["billable_minutes"],
            revenue=row["revenue"],
            total_cost=row["total_cost"],
            components={
                name: ComponentDay(
                    cost=row[f"{name}_cost"],
                    minutes=row[f"{name}_minutes"],
                    sessions=int(row[f"{name}_sessions"]),
                )
                for name in COMPONENTS
            },
            provider_costs=providers.get((row["tenant_id"], row["business_date"]), {}),
            provider_sessions=provider_sessions.get((row["tenant_id"], row["business_date"]), {}),
            cache_hit_rates=caches.get((row["tenant_id"], row["business_date"]), {}),
        )
        for row in rows
    ]


# ---- freshness -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Freshness:
    """Whether the marts hold the whole of `business_date`, and which usual tenants are missing."""

    business_date: date
    timezone: str
    newest_event_at: datetime | None  # UTC, naive, as the warehouse stores it
    day_ends_at: datetime  # UTC, naive: midnight after the day in the reporting zone
    has_events_on_day: bool
    missing_tenants: tuple[str, ...]

    @property
    def is_closed(self) -> bool:
        """The day is over in the data: an event from after its last moment has been built."""
        return self.newest_event_at is not None and self.newest_event_at >= self.day_ends_at

    @property
    def is_complete(self) -> bool:
        return self.is_closed and not self.missing_tenants

    def describe(self, written: Callable[[object], str] = str) -> str:
        """The freshness in one sentence; `written` turns each tenant id into the text of the
        medium it goes to (ledger.escaping)."""
        newest = (
            f"{self.newest_event_at:%Y-%m-%d %H:%M} UTC" if self.newest_event_at else "no events"
        )
        day = self.business_date.isoformat()
        if not self.is_closed:
            return (
                f"business date {day} is not closed: the newest event in the marts is {newest}, "
                f"the day ends {self.day_ends_at:%Y-%m-%d %H:%M} UTC ({self.timezone})"
            )
        if self.missing_tenants:
            return (
                f"business date {day}: no sessions for {', '.join(map(written, self.missing_tenants))}, "
                f"which usually have traffic"
            )
        return f"business date {day} is closed (newest event {newest})"


def newest_event_at(con: duckdb.DuckDBPyConnection) -> datetime | None:
    # Recorded traffic: a replayed copy may be shifted anywhere in time.
    return con.execute(
        "select max(last_event_at) from marts.fct_session_ledger where not is_replay"
    ).fetchone()[0]


def check_freshness(con: duckdb.DuckDBPyConnection, day: date, timezone: str) -> Freshness:
    newest = newest_event_at(con)
    active = con.execute(
        """
        select tenant_id, count(distinct business_date) filter (where business_date < ?) as days,
            count(*) filter (where business_date = ?) as today
        from marts.fct_session_ledger
        where business_date between ? and ?
            and not is_replay
        group by tenant_id
        """,
        [day, day, day - timedelta(days=7), day],
    ).fetchall()
    missing = tuple(
        sorted(t for t, days, today in active if days >= USUAL_TRAFFIC_DAYS and not today)
    )
    has_events = any(today for _, _, today in active)
    return Freshness(day, timezone, newest, day_end_utc(day, timezone), has_events, missing)


def earliest_business_date(con: duckdb.DuckDBPyConnection) -> date | None:
    """The first business date of recorded traffic in the marts."""
    return con.execute(
        "select min(business_date) from marts.fct_session_ledger where not is_replay"
    ).fetchone()[0]


def latest_closed_business_date(con: duckdb.DuckDBPyConnection, timezone: str) -> date | None:
    """The newest business date the marts hold completely (handy for demos on old data)."""
    newest = newest_event_at(con)
    return None if newest is None else last_closed_day(newest, timezone)
