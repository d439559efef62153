"""`ledger alerts run` and `report weekly`: the scheduled outputs, run by hand."""

from __future__ import annotations

from datetime import date

import click

from ledger.alerts.delivery import WebhookURLError
from ledger.alerts.figures import MartsMissingError
from ledger.alerts.run import LATEST, business_dates, run_alerts
from ledger.commands.cli.app import console, load_settings
from ledger.core.calendar import WeekError
from ledger.core.home_lock import home_lock
from ledger.pipeline.publish import publish_records
from ledger.report.review import write_weekly_review
from ledger.serving.published_copy import NotPublishedError


@click.group()
def alerts() -> None:
    """Cost anomaly alerts (the daily Dagster job runs the same thing)."""


@alerts.command("run")
@click.option(
    "--date",
    "day",
    help="Business date YYYY-MM-DD, or 'latest' for the newest closed day in the data "
    "(default: yesterday in LEDGER_TIMEZONE; with --from: latest).",
)
@click.option(
    "--from",
    "date_from",
    help="Check every business date from this one (YYYY-MM-DD) to --date, in order, as the "
    "daily job would have: a backfill, or a month of simulated traffic.",
)
def alerts_run(day: str | None, date_from: str | None = None) -> None:
    """Detect cost anomalies for one business date (or each date of a range) and deliver the
    alerts.

    Alerts go to LEDGER_WEBHOOK_URL (Slack-compatible JSON) when it is set, otherwise to
    alerts/notifications.jsonl under LEDGER_HOME and this terminal. Every anomaly, sent or not,
    is kept in the warehouse table ops.anomalies. Exits 1 when a notification could not be
    delivered (it is kept and retried on the next run).
    """
    settings = load_settings()
    last = _business_date(day, "--date") or (LATEST if date_from else None)
    first = _business_date(date_from, "--from")
    if first == LATEST:
        raise click.UsageError("--from takes YYYY-MM-DD (the range ends at --date, or latest)")
    failed = 0
    # It writes ops tables and publishes them: one run at a time per home, refused in one line
    # naming the holder (a build, say) rather than a lock error from the warehouse.
    with home_lock(settings.home):
        try:
            days = [last] if first is None else business_dates(settings, first, last)
            for checked in days:
                result = run_alerts(
                    settings,
                    checked,
                    echo=lambda text: console.print(
                        f"alert: {text}", highlight=False, markup=False
                    ),
                )
                for line in result.lines:
                    console.print(line, highlight=False, markup=False)
                failed += result.failed
        except (MartsMissingError, WebhookURLError) as exc:
            raise click.ClickException(str(exc)) from None
        # The boards' anomaly inbox reads the published copy: publish what the runs recorded, so
        # the link a notification carries finds its anomaly there.
        publish_records(settings)
    if failed:
        raise click.ClickException(
            f"{failed} notifications could not be delivered (kept in ops.deliveries, "
            "retried by the next `ledger alerts run`)"
        )


def _business_date(text: str | None, option: str) -> date | str | None:
    if text is None or text == LATEST:
        return text
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise click.UsageError(f"{option} takes YYYY-MM-DD or 'latest', got {text!r}") from exc


@click.group()
def report() -> None:
    """Scheduled documents (the weekly Dagster job runs the same thing)."""


@report.command("weekly")
@click.option(
    "--week",
    help="ISO week such as 2026-W47, or 'latest' for the newest complete week in the data "
    "(default: the week before this one).",
)
def report_weekly(week: str | None) -> None:
    """Write the weekly margin review: HTML, Markdown and XLSX under LEDGER_HOME/reports/<week>/."""
    settings = load_settings()
    with home_lock(settings.home):  # it records restatements and publishes: one run at a time
        try:
            result = write_weekly_review(settings, week)
        except (MartsMissingError, NotPublishedError, WeekError) as exc:
            raise click.ClickException(str(exc)) from exc
        # The boards show the restatements the review found: publish them.
        publish_records(settings)
    for line in result.lines:
        console.print(line, highlight=False, markup=False)
