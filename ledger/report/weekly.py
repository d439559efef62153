"""The weekly margin review's figures, read from the marts as exact Decimals.

    review = load_weekly_review(con, "2026-W47", settings)

Per tenant: the `fct_tenant_weekly_margin` row of the week and of the week before (for the
week-over-week change); totals are sums of the unrounded Decimals, so the document's totals equal
the marts'. Anomalies come from `ops.anomalies`, data quality from the marts: unpriced usage, open
sessions, and `fct_quarantined_rows` (rows whose `occurred_at` falls in the week).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal

import duckdb

from ledger.alerts.delivery import describe_cause
from ledger.alerts.detection import Anomaly, Cause
from ledger.alerts.figures import latest_closed_business_date, newest_event_at
from ledger.core.calendar import (
    WeekError,
    day_end_utc,
    iso_week_of,
    parse_iso_week,
    utc_now,
)
from ledger.core.ratios import gross_margin_pct
from ledger.core.vocabulary import COMPONENTS
from ledger.report.capacity import CapacityWeek
from ledger.report.reconciliation import ReconciledWeek
from ledger.serving.drivers import Driver, cells_sql, decompose

ZERO = Decimal(0)
HUNDRED = Decimal(100)

MONEY_FIELDS: tuple[str, ...] = (
    "revenue",
    *(f"{c}_cost" for c in COMPONENTS),
    "total_cost",
    "gross_margin",
    "interruption_waste_cost",
    "cache_savings",
    "llm_cache_savings",
    "realtime_cache_savings",
    "tts_cache_savings",
    "vision_cache_savings",
)
COUNT_FIELDS: tuple[str, ...] = (
    "session_count",
    "open_session_count",
    "interruption_count",
    "unpriced_usage_event_count",
    "sessions_with_unpriced_usage",
)


def latest_complete_iso_week(con: duckdb.DuckDBPyConnection, timezone: str) -> str | None:
    """The newest ISO week whose seven days are all closed in the marts (for old or demo data)."""
    latest = latest_closed_business_date(con, timezone)
    if latest is None:
        return None
    sunday = latest - timedelta(days=(latest.weekday() + 1) % 7)
    return iso_week_of(sunday)


@dataclass(frozen=True)
class TenantWeek:
    tenant_id: str
    figures: dict[str, Decimal]  # MONEY_FIELDS (Decimal) and COUNT_FIELDS (as Decimal)
    billable_minutes: Decimal

    def __getitem__(self, name: str) -> Decimal:
        return self.figures[name]

    @property
    def gross_margin_pct(self) -> Decimal | None:
        return gross_margin_pct(self.figures["revenue"], self.figures["total_cost"])


def sum_weeks(tenant_id: str, rows: list[TenantWeek]) -> TenantWeek:
    names = MONEY_FIELDS + COUNT_FIELDS
    return TenantWeek(
        tenant_id,
        {name: sum((r.figures[name] for r in rows), ZERO) for name in names},
        sum((r.billable_minutes for r in rows), ZERO),
    )


@dataclass(frozen=True)
class ReviewAnomaly:
    business_date: date
    tenant_id: str
    metric: str
    unit: str
    severity: str
    value: Decimal
    expected: Decimal
    abs_change: Decimal
    pct_change: Decimal | None
    cause: str
    notification: str | None


@dataclass(frozen=True)
class Restatement:
    iso_week: str
    tenant_id: str
    figure: str
    old: Decimal
    new: Decimal


@dataclass
class WeeklyReview:
    iso_week: str
    week_start: date
    week_end: date
    currency: str
    timezone: str
    generated_at: datetime
    tenants: list[TenantWeek]
    previous: dict[str, TenantWeek]
    previous_week: str
    days_closed: int
    anomalies: list[ReviewAnomaly] = field(default_factory=list)
    quarantine: list[tuple[str, int]] = field(default_factory=list)  # (reason, rows in week)
    quarantine_undated: int = 0  # rows whose occurred_at cannot be read at all (all time)
    restatements: list[Restatement] = field(default_factory=list)
    # SPEC 10: provider bills against priced usage (ledger.report.reconciliation).
    reconciliation: list[ReconciledWeek] = field(default_factory=list)
    # SPEC 11: what each shared pool scales on (ledger.report.capacity).
    capacity: list[CapacityWeek] = field(default_factory=list)
    # SPEC 11: replayed sessions of the week, left out of every figure above.
    replay_sessions: int = 0
    # What drove the cost change against the week before (ledger/serving/drivers.py).
    drivers: list[Driver] = field(default_factory=list)
    # SPEC 13: the month's spend budgets and the latency leverage (ledger.report.budgets).
    spend_budgets: list = field(default_factory=list)
    leverage: list = field(default_factory=list)

    @property
    def total(self) -> TenantWeek:
        return sum_weeks("total", self.tenants)

    @property
    def previous_total(self) -> TenantWeek:
        return sum_weeks("total", list(self.previous.values()))


def _load_weeks(con: duckdb.DuckDBPyConnection, iso_week: str) -> list[TenantWeek]:
    columns = ", ".join(MONEY_FIELDS + COUNT_FIELDS)
    cursor = con.execute(
        f"select tenant_id, billable_minutes, {columns} from marts.fct_tenant_weekly_margin "
        # Recorded traffic only: replayed copies (SPEC 11) are load, never revenue.
        "where iso_week = ? and not is_replay order by tenant_id",
        [iso_week],
    )
    names = [c[0] for c in cursor.description]
    weeks = []
    for row in cursor.fetchall():
        values = dict(zip(names, row, strict=True))
        figures = {
            name: Decimal(values[name] or 0) if name in COUNT_FIELDS else values[name] or ZERO
            for name in MONEY_FIELDS + COUNT_FIELDS
        }
        weeks.append(TenantWeek(values["tenant_id"], figures, values["billable_minutes"] or ZERO))
    return weeks


def _replay_sessions(con: duckdb.DuckDBPyConnection, iso_week: str) -> int:
    """The replayed copies (`ledger replay`) of the week the review leaves out."""
    return con.execute(
        "select cast(coalesce(sum(session_count), 0) as bigint) "
        "from marts.fct_tenant_weekly_margin where iso_week = ? and is_replay",
        [iso_week],
    ).fetchone()[0]


def _load_drivers(con: duckdb.DuckDBPyConnection, first: date, last: date) -> list[Driver]:
    """The cost change from the week before to the week, split as on the boards' Overview."""
    sql = cells_sql("business_date between ? and ? and not is_replay")
    return decompose(con.execute(sql, [first, last, first - timedelta(days=7), last]).fetchall())


def _load_anomalies(con: duckdb.DuckDBPyConnection, first: date, last: date) -> list[ReviewAnomaly]:
    exists = con.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'ops' and table_name = 'anomalies'"
    ).fetchone()[0]
    if not exists:
        return []
    rows = con.execute(
        """
        select business_date, tenant_id, metric, unit, severity, value, expected, abs_change,
            pct_change, robust_z, baseline_days, cause_kind, cause_component,
            cause_component_share, cause_provider, cause_model, cause_provider_share,
            cause_hint, note, notification
        from ops.anomalies where business_date between ? and ?
        order by business_date, case severity when 'critical' then 0 when 'warning' then 1
            else 2 end, tenant_id, metric
        """,
        [first, last],
    ).fetchall()
    found = []
    for r in rows:
        cause = Cause(r[12], r[13], r[14], r[15], r[16], r[11] or "", r[17] or "")
        anomaly = Anomaly(
            r[1], r[0], r[2], r[3], r[5], r[6], r[7], r[8], r[9], r[4], r[10], cause, r[18] or ""
        )
        found.append(
            ReviewAnomaly(
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], describe_cause(anomaly), r[19]
            )
        )
    return found


def _load_quarantine(
    con: duckdb.DuckDBPyConnection, first: date, last: date, timezone: str
) -> tuple[list[tuple[str, int]], int]:
    # A quarantined row's own occurred_at (when readable) dates it.
    rows = con.execute(
        """
        with dated as (
            select reason, occurred_at
            from marts.fct_quarantined_rows
        )
        select
            reason,
            count(*) filter (where cast(timezone(?, occurred_at) as date) between ? and ?),
            count(*) filter (where occurred_at is null),
        from dated
        group by reason
        order by reason
        """,
        [timezone, first, last],
    ).fetchall()
    return [(reason, int(in_week)) for reason, in_week, _ in rows if in_week], sum(
        int(undated) for _, _, undated in rows
    )


def has_quarantine_table(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'marts' and table_name = 'fct_quarantined_rows'"
        ).fetchone()[0]
    )


def load_weekly_review(
    con: duckdb.DuckDBPyConnection,
    iso_week: str,
    currency: str,
    timezone: str,
    now: datetime | None = None,
) -> WeeklyReview:
    first, last = parse_iso_week(iso_week)
    tenants = _load_weeks(con, iso_week)
    if not tenants:
        newest = newest_event_at(con)
        hint = (
            f"the newest event is of {newest:%Y-%m-%d} (UTC), in ISO week "
            f"{iso_week_of(newest.date())}"
            if newest
            else "the warehouse has no sessions"
        )
        raise WeekError(f"no sessions in {iso_week}: {hint}; pass --week with a week that has data")
    previous_week = iso_week_of(first - timedelta(days=7))
    previous = {w.tenant_id: w for w in _load_weeks(con, previous_week)}
    newest = newest_event_at(con)
    days_closed = sum(
        1
        for offset in range(7)
        if newest is not None and newest >= day_end_utc(first + timedelta(days=offset), timezone)
    )
    quarantine, undated = (
        _load_quarantine(con, first, last, timezone) if has_quarantine_table(con) else ([], 0)
    )
    return WeeklyReview(
        iso_week=iso_week,
        week_start=first,
        week_end=last,
        currency=currency,
        timezone=timezone,
        generated_at=utc_now(now),
        tenants=tenants,
        previous=previous,
        previous_week=previous_week,
        days_closed=days_closed,
        anomalies=_load_anomalies(con, first, last),
        quarantine=quarantine,
        quarantine_undated=undated,
        replay_sessions=_replay_sessions(con, iso_week),
        drivers=_load_drivers(con, first, last),
    )
