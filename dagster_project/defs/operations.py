"""Scheduled operations: daily cost anomaly alerts, the weekly margin review, and asset checks that
mark stale or incomplete data.

    jobs, schedules, checks = operations_definitions()
    Definitions(..., jobs=[*jobs], schedules=[*schedules], asset_checks=[*checks])

| job                   | schedule (reporting time zone)          | does                               |
|-----------------------|-----------------------------------------|------------------------------------|
| `daily_cost_alerts`   | every day 06:00, for the day before     | `ledger alerts run --date D`       |
| `weekly_margin_review`| Mondays 07:00, for the ISO week before  | `ledger report weekly --week W`    |

The times are `LEDGER_ALERTS_CRON` and `LEDGER_REVIEW_CRON`. Both schedules are running by default:
a daemon (`ledger up`) fires them without anyone switching them on in the UI.

Both jobs take their date or week as run config, so a run launched by hand from the UI (or
`ledger alerts run` / `ledger report weekly`) does exactly what the schedule does.

The schedules' time zone and times are the one exception to "no environment at import": Dagster
needs them when the schedule is defined, so `operations_definitions()` takes them from the settings
then (`Settings.from_env()`). Everything else resolves through the `warehouse` resource when a run starts.
"""

from datetime import date, datetime, timedelta

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetKey,
    Config,
    DefaultScheduleStatus,
    JobDefinition,
    MetadataValue,
    OpExecutionContext,
    RunRequest,
    ScheduleDefinition,
    ScheduleEvaluationContext,
    asset_check,
    job,
    op,
    schedule,
)

from dagster_project.defs.resources import LedgerWarehouse
from ledger.alerts.figures import check_freshness, latest_closed_business_date
from ledger.alerts.run import run_alerts
from ledger.core.calendar import iso_week_of, yesterday
from ledger.core.settings import Settings
from ledger.pipeline.publish import publish_records
from ledger.report.review import write_weekly_review

TENANT_DAILY_MARGIN = AssetKey(["marts", "fct_tenant_daily_margin"])
DAILY_ALERTS_JOB = "daily_cost_alerts"
WEEKLY_REVIEW_JOB = "weekly_margin_review"


class AlertRunConfig(Config):
    business_date: str = ""  # YYYY-MM-DD; empty: yesterday in the reporting time zone


class WeeklyReviewConfig(Config):
    iso_week: str = ""  # e.g. 2026-W47; empty: the ISO week before this one


@op(description="Detect cost anomalies for one business date and deliver the alerts.")
def run_cost_alerts(
    context: OpExecutionContext, config: AlertRunConfig, warehouse: LedgerWarehouse
) -> None:
    day = date.fromisoformat(config.business_date) if config.business_date else None
    settings = warehouse.settings()
    result = run_alerts(settings, day, echo=context.log.info)
    # The boards' anomaly inbox reads the published copy: publish what the run recorded.
    publish_records(settings)
    for line in result.lines:
        context.log.info(line)
    if result.failed:
        # The run itself succeeded (the failures are kept and retried next run); say so loudly.
        context.log.warning(f"{result.failed} notifications failed and will be retried")


@op(description="Write the weekly margin review (HTML, Markdown, XLSX) for one ISO week.")
def write_margin_review(
    context: OpExecutionContext, config: WeeklyReviewConfig, warehouse: LedgerWarehouse
) -> None:
    settings = warehouse.settings()
    result = write_weekly_review(settings, config.iso_week or None)
    # The boards show the restatements the review found: publish them.
    publish_records(settings)
    for line in result.lines:
        context.log.info(line)


@job(name=DAILY_ALERTS_JOB, description="Cost anomaly detection and alert delivery for one day.")
def daily_cost_alerts() -> None:
    run_cost_alerts()


@job(name=WEEKLY_REVIEW_JOB, description="The weekly margin review for one ISO week.")
def weekly_margin_review() -> None:
    write_margin_review()


def alert_run_config(day: date) -> dict:
    return {"ops": {"run_cost_alerts": {"config": {"business_date": day.isoformat()}}}}


def review_run_config(iso_week: str) -> dict:
    return {"ops": {"write_margin_review": {"config": {"iso_week": iso_week}}}}


def _scheduled_local(context: ScheduleEvaluationContext) -> datetime:
    # Dagster hands the tick in the schedule's execution time zone.
    return context.scheduled_execution_time or datetime.now()


def build_schedules(settings: Settings) -> list[ScheduleDefinition]:
    @schedule(
        name="daily_cost_alerts_schedule",
        cron_schedule=settings.alerts_cron,
        job=daily_cost_alerts,
        execution_timezone=settings.timezone,
        default_status=DefaultScheduleStatus.RUNNING,
        description="Every morning: yesterday's cost anomalies.",
    )
    def daily_cost_alerts_schedule(context: ScheduleEvaluationContext) -> RunRequest:
        day = _scheduled_local(context).date() - timedelta(days=1)
        return RunRequest(run_key=f"alerts-{day.isoformat()}", run_config=alert_run_config(day))

    @schedule(
        name="weekly_margin_review_schedule",
        cron_schedule=settings.review_cron,
        job=weekly_margin_review,
        execution_timezone=settings.timezone,
        default_status=DefaultScheduleStatus.RUNNING,
        description="Monday morning: the margin review of the ISO week before.",
    )
    def weekly_margin_review_schedule(context: ScheduleEvaluationContext) -> RunRequest:
        week = iso_week_of(_scheduled_local(context).date() - timedelta(days=7))
        return RunRequest(run_key=f"review-{week}", run_config=review_run_config(week))

    return [daily_cost_alerts_schedule, weekly_margin_review_schedule]


# ---- asset checks --------------------------------------------------------------------------------


def build_freshness_checks(
    target: AssetKey = TENANT_DAILY_MARGIN,
) -> list[AssetChecksDefinition]:
    @asset_check(
        asset=target,
        name="yesterday_is_closed",
        description=(
            "Warns when yesterday (reporting time zone) is not closed in the marts: no event "
            "from after its end has been built yet, so its figures are incomplete and cost "
            "alerts for it are held."
        ),
        blocking=False,
    )
    def yesterday_is_closed(
        context: AssetCheckExecutionContext, warehouse: LedgerWarehouse
    ) -> AssetCheckResult:
        settings = warehouse.settings()
        day = yesterday(settings.timezone)
        with warehouse.connect_marts() as con:
            freshness = check_freshness(con, day, settings.timezone)
            latest = latest_closed_business_date(con, settings.timezone)
        return AssetCheckResult(
            passed=freshness.is_closed,
            severity=AssetCheckSeverity.WARN,
            description=freshness.describe(),
            metadata={
                "business_date": day.isoformat(),
                "newest_event_at": str(freshness.newest_event_at or ""),
                "latest_closed_business_date": latest.isoformat() if latest else "",
            },
        )

    @asset_check(
        asset=target,
        name="usual_tenants_have_traffic",
        description=(
            "Warns when a tenant with sessions on most of the 7 days before the newest closed "
            "business date has none on it: a feed that stopped, not a quiet customer."
        ),
        blocking=False,
    )
    def usual_tenants_have_traffic(
        context: AssetCheckExecutionContext, warehouse: LedgerWarehouse
    ) -> AssetCheckResult:
        settings = warehouse.settings()
        with warehouse.connect_marts() as con:
            latest = latest_closed_business_date(con, settings.timezone)
            if latest is None:
                return AssetCheckResult(
                    passed=False,
                    severity=AssetCheckSeverity.WARN,
                    description="no events in the marts yet",
                )
            freshness = check_freshness(con, latest, settings.timezone)
        missing = list(freshness.missing_tenants)
        return AssetCheckResult(
            passed=not missing,
            severity=AssetCheckSeverity.WARN,
            description=freshness.describe(),
            metadata={
                "business_date": latest.isoformat(),
                "missing_tenants": MetadataValue.json(missing),
            },
        )

    return [yesterday_is_closed, usual_tenants_have_traffic]


def operations_definitions(
    settings: Settings | None = None,
) -> tuple[list[JobDefinition], list[ScheduleDefinition], list[AssetChecksDefinition]]:
    """(jobs, schedules, asset checks) of the scheduled operations, for `Definitions(...)`."""
    return (
        [daily_cost_alerts, weekly_margin_review],
        build_schedules(settings or Settings.from_env()),
        build_freshness_checks(),
    )
