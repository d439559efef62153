"""`ledger build` for Dagster: the job `build_ledger` run in-process on given settings."""

from __future__ import annotations

import time

from dagster import AssetCheckSeverity, DagsterEventType, DagsterInstance

from dagster_project.definitions import BUILD_JOB_NAME, load_definitions
from ledger.build import BuildOutcome
from ledger.settings import Settings


def build_run_config(settings: Settings, *, full_refresh: bool = False) -> dict:
    """The run's resources point at `settings` (not the environment); the console logger keeps
    quiet: the command prints its own summary."""
    return {
        "resources": {
            "warehouse": {
                "config": {
                    "home": str(settings.home),
                    "reference_dir": str(settings.reference_dir),
                    "reporting_currency": settings.reporting_currency,
                    "timezone": settings.timezone,
                    "engine": settings.engine,
                    "full_refresh": full_refresh,
                }
            }
        },
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
    }


def run_build_job(settings: Settings, *, full_refresh: bool = False) -> BuildOutcome:
    """Run the job `build_ledger` on the installation `settings` describes, in this process.

    Registered as the `build` entry point of `voice_ledger.pipeline` (pyproject.toml).
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
        event.event_specific_data.materialization
        for event in result.all_events
        if event.event_type == DagsterEventType.ASSET_MATERIALIZATION
    ]
    checks = [
        event.event_specific_data
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
            lines.append(materialization.metadata["summary"].value)
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
                error = event.event_specific_data.error
                message = error.cause.message if error and error.cause else error.message
                lines.append(f"failed step {event.step_key}: {message.strip()}")
    elif any(m.asset_key.path == ["published", "marts"] for m in materialized):
        lines.append(f"published: {settings.published_path}")
    lines.append(f"build {'succeeded' if result.success else 'FAILED'} in {seconds:.1f}s")
    return BuildOutcome(result.success, seconds, lines)
