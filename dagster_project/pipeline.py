"""`ledger build` for Dagster: the job `build_ledger` run in-process on given settings."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from dagster import AssetCheckSeverity, DagsterEventType, DagsterInstance

from dagster_project.definitions import BUILD_JOB_NAME, load_definitions
from ledger.core.settings import Settings


@dataclass
class BuildOutcome:
    """What `ledger build` reports: whether the run succeeded, how long it took, and one line per
    step or check worth a person's attention."""

    success: bool
    seconds: float
    lines: list[str] = field(default_factory=list)


def build_run_config(settings: Settings, *, full_refresh: bool = False) -> dict:
    """The run's resources point at `settings` (not the environment); the console logger keeps
    quiet: the command prints its own summary."""
    return {
        "resources": {
            "warehouse": {
                "config": {"settings_json": settings.as_json(), "full_refresh": full_refresh}
            }
        },
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
    }


def run_build_job(settings: Settings, *, full_refresh: bool = False) -> BuildOutcome:
    """Run the job `build_ledger` on the installation `settings` describes, in this process.

    `ledger build` (ledger/commands/build.py) calls it.
    """
    started = time.perf_counter()
    job = load_definitions().resolve_job_def(BUILD_JOB_NAME)
    with DagsterInstance.ephemeral() as instance:
        result = job.execute_in_process(
            instance=instance,
            raise_on_error=False,
            run_config=build_run_config(settings, full_refresh=full_refresh),
        )
    seconds = time.perf_counter() - started
    materialized = [
        event.step_materialization_data.materialization
        for event in result.all_events
        if event.event_type == DagsterEventType.ASSET_MATERIALIZATION
    ]
    checks = [
        event.asset_check_evaluation_data
        for event in result.all_events
        if event.event_type == DagsterEventType.ASSET_CHECK_EVALUATION
    ]
    failed_checks = [c for c in checks if not c.passed and c.severity == AssetCheckSeverity.ERROR]
    warned_checks = [c for c in checks if not c.passed and c.severity != AssetCheckSeverity.ERROR]
    lines = []
    for materialization in materialized:
        key = materialization.asset_key.to_user_string()
        if key == "raw/events":
            meta = {k: v.value for k, v in materialization.metadata.items()}
            lines.append(
                f"ingest: {meta['files_ingested']} new files, {meta['accepted']:,} events accepted, "
                f"{meta['duplicates']:,} duplicates, {meta['quarantined']:,} quarantined; "
                f"{meta['total_events']:,} events in the warehouse"
            )
        if key == "ops/refresh_events":
            lines.append(str(materialization.metadata["summary"].value))
    dbt_models = [
        m
        for m in materialized
        if m.asset_key.path[0] not in ("raw", "reference", "published", "ops")
    ]
    lines.append(
        f"dbt: {len(dbt_models)} models built; checks: "
        f"{len(checks) - len(failed_checks) - len(warned_checks)} passed, "
        f"{len(warned_checks)} warnings, {len(failed_checks)} failed"
    )
    for check in warned_checks:
        lines.append(f"  warning: {check.asset_key.to_user_string()} {check.check_name}")
    for check in failed_checks:
        lines.append(f"  failed: {check.asset_key.to_user_string()} {check.check_name}")
    if not result.success:
        for event in result.all_events:
            if event.event_type == DagsterEventType.STEP_FAILURE:
                error = event.step_failure_data.error
                message = (error.cause or error).message if error else "(no error recorded)"
                lines.append(f"failed step {event.step_key}: {message.strip()}")
    elif any(m.asset_key.path == ["published", "marts"] for m in materialized):
        lines.append(f"published: {settings.published_path}")
    lines.append(f"build {'succeeded' if result.success else 'FAILED'} in {seconds:.1f}s")
    return BuildOutcome(result.success, seconds, lines)
