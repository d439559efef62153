"""`ledger build`: run the pipeline's build job in this process and summarise it.

The orchestrator is not imported here: the build function is found through the entry point group
`voice_ledger.pipeline` (name `build`; `run_dbt` for a partial dbt run such as `ledger whatif`'s),
which the Dagster code location registers in pyproject.toml. So `ledger` never depends on
`dagster_project`, and another orchestrator could register its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points

from ledger.settings import Settings

PIPELINE_GROUP = "voice_ledger.pipeline"
BUILD_ENTRY_POINT = "build"
RUN_DBT_ENTRY_POINT = "run_dbt"


@dataclass
class BuildOutcome:
    success: bool
    seconds: float
    lines: list[str] = field(default_factory=list)


class PipelineNotInstalledError(RuntimeError):
    """No build function is registered under the entry point group."""


def _pipeline_function(name: str) -> Callable:
    found = [ep for ep in entry_points(group=PIPELINE_GROUP) if ep.name == name]
    if not found:
        raise PipelineNotInstalledError(
            f"no `{name}` entry point in group {PIPELINE_GROUP}: reinstall the "
            "project (`make env`) so that its pipeline registers itself"
        )
    return found[0].load()


def build_function() -> Callable[..., BuildOutcome]:
    return _pipeline_function(BUILD_ENTRY_POINT)


def run_dbt(settings: Settings, args: Sequence[str]) -> None:
    """`dbt <args>` on the warehouse `settings` name, the way the pipeline runs dbt.

    Raises `ledger.transform.DbtRunError` when dbt fails.
    """
    _pipeline_function(RUN_DBT_ENTRY_POINT)(settings, args)


def run_build(settings: Settings | None = None, *, full_refresh: bool = False) -> BuildOutcome:
    """Materialise ingest, reference data, every dbt model and test, and the published copy of
    the installation `settings` describe (default: the `LEDGER_*` environment). Incremental
    unless `full_refresh` (see `ledger.refresh`). What a killed publish left behind is removed
    first."""
    from ledger.publish import remove_publish_leftovers

    settings = settings or Settings.from_env()
    remove_publish_leftovers(settings)
    return build_function()(settings, full_refresh=full_refresh)
