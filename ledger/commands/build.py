"""`ledger build`: run the pipeline's build job in this process and summarise it.

The commands sit above the orchestrator: this module imports the Dagster code location directly
(`dagster_project.pipeline`), lazily, so that `ledger --help` and the commands that never build
do not pay for loading Dagster. Nothing below `ledger.commands` imports the orchestrator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ledger.core.home_lock import home_lock
from ledger.core.settings import Settings

if TYPE_CHECKING:
    from dagster_project.pipeline import BuildOutcome


def run_dbt(settings: Settings, args: Sequence[str]) -> None:
    """`dbt <args>` on the warehouse `settings` name, the way the pipeline runs dbt.

    Raises `ledger.pipeline.transform.DbtRunError` when dbt fails.
    """
    from dagster_project.defs.ledger_dbt import run_dbt as run_dbt_resource

    run_dbt_resource(settings, args)


def run_build(settings: Settings | None = None, *, full_refresh: bool = False) -> BuildOutcome:
    """Materialise ingest, reference data, every dbt model and test, and the published copy of
    the installation `settings` describe (default: the `LEDGER_*` environment). Incremental
    unless `full_refresh` (see `ledger.pipeline.plan`). Raises `HomeLocked` when another run holds
    the home, and a damaged warehouse's DuckDB error, before anything runs; what a killed publish
    left behind is removed first."""
    from dagster_project.pipeline import run_build_job
    from ledger.pipeline.publish import remove_publish_leftovers
    from ledger.warehouse import raise_if_damaged

    settings = settings or Settings.from_env()
    # The whole build is one run of the home: another run's ingest or plan never lands between
    # its steps (which take the lock again, reentrantly).
    with home_lock(settings.home):
        raise_if_damaged(settings.warehouse_path)
        remove_publish_leftovers(settings)
        return run_build_job(settings, full_refresh=full_refresh)
