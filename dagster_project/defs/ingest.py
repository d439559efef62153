"""Ingest: the landing folder becomes `raw.events`; a sensor notices new files."""

from dagster import (
    AssetExecutionContext,
    AssetKey,
    DefaultSensorStatus,
    MaterializeResult,
    RunRequest,
    SensorEvaluationContext,
    SkipReason,
    asset,
    sensor,
)

from dagster_project.defs.resources import LedgerWarehouse
from ledger.ingest import ingest_paths
from ledger.ingest.files import discover

RAW_EVENTS = AssetKey(["raw", "events"])


@asset(
    key=RAW_EVENTS,
    group_name="ingest",
    description=(
        "Contract events from the landing folder: validated in bulk, bad rows quarantined with "
        "their reason, deduplicated permanently on (source, event_id), one transaction per file."
    ),
)
def raw_events(context: AssetExecutionContext, warehouse: LedgerWarehouse) -> MaterializeResult:
    settings = warehouse.settings()
    settings.ensure_dirs()
    results = ingest_paths(
        settings, [settings.landing_dir], on_file=lambda r: context.log.info(r.summary_line())
    )
    new = [r for r in results if r.status == "ingested"]
    with warehouse.connect(read_only=True) as con:
        # From the manifest of raw files, not a scan of every event (issue 11: a build's cost
        # follows new data).
        total_events, newest = con.execute(
            "select coalesce(sum(rows), 0), cast(max(max_occurred_at) as varchar) "
            "from raw.event_files"
        ).fetchone()
    return MaterializeResult(
        metadata={
            "files_ingested": len(new),
            "files_already_ingested": len(results) - len(new),
            "accepted": sum(r.accepted for r in new),
            "duplicates": sum(r.duplicates for r in new),
            "quarantined": sum(r.quarantined for r in new),
            "total_events": total_events,
            "newest_event_at": newest or "",
        }
    )


def landing_sensor_for(job_name: str):
    @sensor(
        name="landing_files_sensor",
        job_name=job_name,
        minimum_interval_seconds=30,
        description="Starts a ledger build when new files appear in the landing folder.",
        # A daemon (`ledger up`) watches the landing folder without anyone switching it on.
        default_status=DefaultSensorStatus.RUNNING,
    )
    def landing_files_sensor(context: SensorEvaluationContext, warehouse: LedgerWarehouse):
        landing = warehouse.settings().landing_dir
        if not landing.exists():
            return SkipReason(f"no landing folder yet at {landing}")
        # The cursor is the newest modification time already handed to a run: files are written
        # under a hidden name and renamed when complete, so a new file always has a newer mtime.
        seen = float(context.cursor or 0)
        newer = [p for p in discover([landing]) if p.stat().st_mtime > seen]
        if not newer:
            return SkipReason("no new landing files")
        newest = max(p.stat().st_mtime for p in newer)
        context.update_cursor(str(newest))
        return RunRequest(run_key=f"landing-{newest}", tags={"new_files": str(len(newer))})

    return landing_files_sensor
