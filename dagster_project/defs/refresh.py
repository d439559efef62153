"""The refresh plan before dbt and its commit after publishing (issue 11).

`ops/refresh_events` plans the build (`ledger.pipeline.plan.plan_refresh`): which raw files are new,
which sessions and which dates are recomputed, or why the build is a full refresh; its metadata is
what a `dagster dev` user reads to see what a run refreshed. dbt's staging reads the table (a dbt
source), so the dbt assets run after it. `ops/refresh_state` commits the plan only after the
marts were built, tested and published: a failed run is planned again, in full, by the next one.
"""

from dagster import AssetExecutionContext, AssetKey, MaterializeResult, MetadataValue, asset

from dagster_project.defs.reference import REFERENCE_TABLES
from dagster_project.defs.resources import LedgerWarehouse
from ledger.pipeline.plan import commit_refresh, plan_refresh

REFRESH_EVENTS = AssetKey(["ops", "refresh_events"])
REFRESH_STATE = AssetKey(["ops", "refresh_state"])
# Lists longer than this are cut in the metadata (the counts stay exact).
_LISTED = 50


def _listing(items: list) -> str:
    shown = [str(item) for item in items[:_LISTED]]
    more = len(items) - len(shown)
    return "\n".join(shown + ([f"... and {more} more"] if more > 0 else []))


@asset(
    key=REFRESH_EVENTS,
    group_name="refresh",
    deps=[AssetKey(["raw", "events"]), *(AssetKey(["reference", t]) for t in REFERENCE_TABLES)],
    description=(
        "The refresh plan: the raw files no successful build has read, the sessions they touch, "
        "the sessions the missing_end watermark closes and those a reference edit restates, and "
        "the ISO weeks their aggregates are recomputed for; or why this build is a full refresh."
    ),
)
def refresh_plan(context: AssetExecutionContext, warehouse: LedgerWarehouse) -> MaterializeResult:
    with warehouse.connect() as con:
        plan = plan_refresh(con, warehouse.settings(), full_refresh=warehouse.full_refresh)
    context.log.info(plan.summary_line())
    metadata = {
        "mode": plan.mode,
        "why": plan.why,
        "files": len(plan.files),
        "file_list": MetadataValue.md(_listing(plan.files) or "(none)"),
        "sessions": plan.sessions,
        "newest_event_at": str(plan.newest_event_at or ""),
        "summary": plan.summary_line(),
    }
    if not plan.is_full:
        metadata |= {
            f"sessions_{reason}": count for reason, count in plan.sessions_by_reason.items()
        }
        metadata |= {
            "dates": len(plan.dates),
            "date_list": MetadataValue.md(_listing(plan.dates) or "(none)"),
            "iso_weeks": MetadataValue.md(_listing(plan.weeks) or "(none)"),
        }
    return MaterializeResult(metadata=metadata)


def refresh_state_asset(upstream: list[AssetKey]):
    @asset(
        key=REFRESH_STATE,
        group_name="publish",
        deps=upstream,
        description=(
            "The refresh plan, committed after the marts were published: its files count as "
            "read, restated sessions are recorded (ops.restated_sessions), reference tables "
            "are snapshotted for the next build's comparison."
        ),
    )
    def refresh_state(
        context: AssetExecutionContext, warehouse: LedgerWarehouse
    ) -> MaterializeResult:
        with warehouse.connect() as con:
            restated = commit_refresh(con)
        return MaterializeResult(metadata={"restated_sessions": restated})

    return refresh_state
