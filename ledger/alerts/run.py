"""One alert run: check the day's data, detect, record, notify. `ledger alerts run` and the daily
Dagster job both call `run_alerts`.

    result = run_alerts(settings, date(2026, 11, 20))
    print("\\n".join(result.lines))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import duckdb

from ledger.alerts.delivery import (
    DEFAULT_COOLDOWN_DAYS,
    Sink,
    WebhookSink,
    notify_anomalies,
    notify_stale,
    retry_failed,
)
from ledger.alerts.detection import (
    DEFAULT_PARAMS,
    PAGED_SEVERITIES,
    Anomaly,
    DetectionParams,
    detect,
)
from ledger.alerts.drift import DriftOutcome, notify_drifts
from ledger.alerts.figures import (
    Freshness,
    MartsMissingError,
    check_freshness,
    earliest_business_date,
    latest_closed_business_date,
    load_tenant_days,
    require_marts,
)
from ledger.alerts.routing import ROUTED_KINDS, default_sink
from ledger.alerts.store import (
    NOT_PAGED,
    REPORT_ONLY,
    ensure_ops_schema,
    failed_deliveries,
    new_id,
    record_anomalies,
    record_run,
    record_undelivered,
)
from ledger.core.calendar import utc_now, yesterday
from ledger.core.settings import Settings
from ledger.serving.published_copy import open_published_with_ops

# `--date latest`: the newest business date the data holds completely (demo or historical data).
LATEST = "latest"


@dataclass
class AlertRunResult:
    run_id: str
    business_date: date
    freshness: Freshness
    channel: str
    anomalies: list[Anomaly] = field(default_factory=list)
    sent: int = 0
    failed: int = 0
    suppressed: int = 0
    retried_sent: int = 0
    stale_alert_sent: bool = False
    drift: DriftOutcome | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def paged(self) -> list[Anomaly]:
        return [a for a in self.anomalies if a.severity in PAGED_SEVERITIES]


def detect_day(
    con: duckdb.DuckDBPyConnection, day: date, params: DetectionParams = DEFAULT_PARAMS
) -> list[Anomaly]:
    """Anomalies of every tenant on `day` against the trailing window (no freshness check)."""
    figures = load_tenant_days(con, day - timedelta(days=params.window_days), day)
    return detect(figures, day, params)


def record_days_for_report(
    con: duckdb.DuckDBPyConnection,
    days: list[date],
    settings: Settings,
    now: datetime,
    params: DetectionParams = DEFAULT_PARAMS,
) -> None:
    """Detect and record (never notify) each closed day, so a weekly review lists every anomaly
    of its week even if a daily run was missed; anomalies already recorded keep their outcome."""
    ensure_ops_schema(con)
    for day in days:
        if check_freshness(con, day, settings.timezone).is_closed:
            record_anomalies(
                con, detect_day(con, day, params), settings.reporting_currency, now, REPORT_ONLY
            )


def first_checkable_date(settings: Settings, params: DetectionParams = DEFAULT_PARAMS) -> date:
    """The first business date with enough history for a baseline: the data's first date plus
    the detector's minimum baseline days, or the newest closed date when the data is shorter
    (what `ledger demo` checks from)."""
    with open_published_with_ops(settings) as con:
        require_marts(con, str(settings.published_path))
        first = earliest_business_date(con)
        newest = latest_closed_business_date(con, settings.timezone)
    if first is None or newest is None:
        raise MartsMissingError("no closed business date in the marts yet")
    return min(first + timedelta(days=params.min_baseline_days), newest)


def business_dates(settings: Settings, first: date, last: date | str | None) -> list[date]:
    """Each business date from `first` to `last` ('latest' or None: the newest closed day in the
    published marts), in order; MartsMissingError when the range holds none."""
    newest: date | None
    if isinstance(last, date):
        newest = last
    else:
        with open_published_with_ops(settings) as con:
            require_marts(con, str(settings.published_path))
            newest = latest_closed_business_date(con, settings.timezone)
    if newest is None or newest < first:
        raise MartsMissingError(f"no closed business date from {first} to {newest or 'the newest'}")
    return [first + timedelta(days=n) for n in range((newest - first).days + 1)]


def run_alerts(
    settings: Settings,
    day: date | str | None = None,
    *,
    now: datetime | None = None,
    sink: Sink | None = None,
    params: DetectionParams = DEFAULT_PARAMS,
    cooldown_days: int = DEFAULT_COOLDOWN_DAYS,
    echo: Callable[[str], None] | None = print,
) -> AlertRunResult:
    """Check `day` (default: yesterday in the reporting zone; 'latest': the newest closed day in
    the data) and notify what needs notifying.

    Failed notifications of earlier runs are retried first. On a day the data has not closed, no
    anomaly is detected or sent: one "data is stale" notification goes out instead.
    """
    now = utc_now(now)
    sink = sink or default_sink(settings, echo)
    run_id = new_id()
    with open_published_with_ops(settings) as con:
        require_marts(con, str(settings.published_path))
        if day == LATEST:
            day = latest_closed_business_date(con, settings.timezone)
            if day is None:
                raise MartsMissingError("no closed business date in the marts yet")
        day = day or yesterday(settings.timezone, now)
        ensure_ops_schema(con)
        freshness = check_freshness(con, day, settings.timezone)
        result = AlertRunResult(run_id, day, freshness, sink.channel)

        retried, still_failing = retry_failed(
            con, sink, failed_deliveries(con, except_kinds=ROUTED_KINDS), now
        )
        result.retried_sent = len(retried)
        result.failed += len(still_failing)

        if not freshness.is_closed:
            outcome = notify_stale(con, sink, freshness, now, run_id, cooldown_days)
            result.stale_alert_sent = bool(outcome.sent)
        else:
            result.anomalies = detect_day(con, day, params)
            record_anomalies(con, result.anomalies, settings.reporting_currency, now, NOT_PAGED)
            outcome = notify_anomalies(
                con,
                sink,
                result.paged,
                settings.reporting_currency,
                now,
                run_id,
                cooldown_days,
                boards_url=settings.boards_url,
            )
            result.suppressed = len(outcome.suppressed)
            # SPEC 10: rate card drift goes through the same delivery and cooldown.
            result.drift = notify_drifts(
                con, sink, day, now, run_id, cooldown_days, boards_url=settings.boards_url
            )
            if freshness.missing_tenants:
                stale = notify_stale(con, sink, freshness, now, run_id, cooldown_days)
                result.stale_alert_sent = bool(stale.sent)
                outcome.sent += stale.sent
                outcome.failed += stale.failed
        result.sent = len(outcome.sent)
        result.failed += len(outcome.failed)
        if result.drift is not None:
            result.sent += result.drift.sent
            result.failed += result.drift.failed
        record_run(
            con,
            {
                "run_id": run_id,
                "business_date": day,
                "started_at": now,
                "data_closed": freshness.is_closed,
                "newest_event_at": freshness.newest_event_at,
                "missing_tenants": list(freshness.missing_tenants),
                "anomalies": len(result.anomalies),
                "paged": len(result.paged),
                "notifications_sent": result.sent,
                "notifications_failed": result.failed,
                "suppressed_by_cooldown": result.suppressed,
                "retried_sent": result.retried_sent,
                "channel": sink.channel,
            },
        )
        latest = (
            None if freshness.is_closed else latest_closed_business_date(con, settings.timezone)
        )
        record_undelivered(con, settings.alerts_dir)
    result.lines = _summary(result, settings, sink, latest)
    return result


def _summary(
    result: AlertRunResult, settings: Settings, sink: Sink, latest: date | None
) -> list[str]:
    day = result.business_date.isoformat()
    lines = [f"alerts for business date {day}: {result.freshness.describe()}"]
    if not result.freshness.is_closed:
        lines.append(
            "anomaly alerts held: "
            + (
                "one data-stale notification sent"
                if result.stale_alert_sent
                else "data-stale notification already sent (cooldown)"
            )
        )
        if latest is not None:
            lines.append(
                f"the newest closed day is {latest.isoformat()}: `ledger alerts run "
                f"--date {latest.isoformat()}` checks it"
            )
    else:
        lines.append(
            f"{len(result.anomalies)} anomalies recorded ({len(result.paged)} paged), "
            f"{result.sent} notifications sent, {result.suppressed} held by the cooldown"
        )
    if result.drift is not None:
        lines.append(result.drift.summary())
    if result.retried_sent:
        lines.append(f"{result.retried_sent} earlier failed notifications delivered")
    if result.failed:
        lines.append(f"{result.failed} notifications failed: they are retried on the next run")
    where = (
        f"webhook at {sink.host}"
        if isinstance(sink, WebhookSink)
        else f"{getattr(sink, 'path', sink.channel)}"
    )
    lines.append(
        f"notifications: {where}; every anomaly: table ops.anomalies in {settings.warehouse_path}"
    )
    return lines
