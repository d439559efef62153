"""`ledger build`: run the pipeline's build job in this process and summarise it.

The orchestrator is not imported here: the build function is found through the entry point group
`voice_ledger.pipeline` (name `build`), which the Dagster code location registers in
pyproject.toml. So `ledger` never depends on `dagster_project`, and another orchestrator could
register its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points

from ledger.settings import Settings

PIPELINE_GROUP = "voice_ledger.pipeline"
BUILD_ENTRY_POINT = "build"


@dataclass
class BuildOutcome:
    success: bool
    seconds: float
    lines: list[str] = field(default_factory=list)


class PipelineNotInstalledError(RuntimeError):
    """No build function is registered under the entry point group."""


def build_function() -> Callable[..., BuildOutcome]:
    found = [ep for ep in entry_points(group=PIPELINE_GROUP) if ep.name == BUILD_ENTRY_POINT]
    if not found:
        raise PipelineNotInstalledError(
            f"no `{BUILD_ENTRY_POINT}` entry point in group {PIPELINE_GROUP}: reinstall the "
            "project (`make env`) so that its pipeline registers itself"
        )
    return found[0].load()


def run_build(settings: Settings | None = None, *, full_refresh: bool = False) -> BuildOutcome:
    """Materialise ingest, reference data, every dbt model and test, and the published copy of
    the installation `settings` describe (default: the `LEDGER_*` environment).

    Incremental unless `full_refresh` (see `ledger.refresh`)."""
    return build_function()(settings or Settings.from_env(), full_refresh=full_refresh)
