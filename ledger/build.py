"""`ledger build`: the Dagster job `build_ledger`, run in this process, and its summary."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ledger.settings import Settings


@dataclass
class BuildOutcome:
    success: bool
    seconds: float
    lines: list[str] = field(default_factory=list)


def _quiet_run_config() -> dict:
    # Dagster's console logger narrates every step; the command prints its own summary instead.
    return {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def run_build(settings: Settings | None = None) -> BuildOutcome:
    """Materialise ingest, reference data, every dbt model and test, and the published copy."""
    from dagster import AssetCheckSeverity, DagsterEventType, DagsterInstance

    from dagster_project.definitions import BUILD_JOB_NAME, defs

    settings = settings or Settings.from_env()
    started = time.perf_counter()
    job = defs.resolve_job_def(BUILD_JOB_NAME)
    with DagsterInstance.ephemeral() as instance:
        result = job.execute_in_process(
            instance=instance, raise_on_error=False, run_config=_quiet_run_config()
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
    dbt_models = [
        m for m in materialized if m.asset_key.path[0] not in ("raw", "reference", "published")
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
