"""The dbt project (staging -> intermediate -> marts) as Dagster assets through dagster-dbt.

dbt runs one way: `DbtCliResource` with the arguments of `ledger.pipeline.transform.dbt_build_args`, which
carry everything the invocation needs on its command line (the environment only names the
building process, for `ledger-dbt`: ledger/pipeline/dbt_child.py). The manifest Dagster needs to know the
assets is prepared by `prepare_manifest()`, which the definitions loader calls; importing this
module parses nothing.
"""

import fcntl
import json
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from dagster import AssetExecutionContext, AssetsDefinition
from dagster_dbt import DbtCliResource, DbtProject, dbt_assets
from dagster_dbt.errors import DagsterDbtCliRuntimeError
from dbt.cli.main import dbtRunner

from dagster_project.defs.resources import LedgerWarehouse
from ledger.core import vocabulary
from ledger.core.settings import DBT_PROJECT_DIR, Settings
from ledger.pipeline.dbt_child import spawning_dbt
from ledger.pipeline.plan import refresh_mode
from ledger.pipeline.transform import DbtRunError, dbt_build_args, dbt_run_flags, prepare_engine

MANIFEST_DIR = DBT_PROJECT_DIR / "target"
MANIFEST_PATH = MANIFEST_DIR / "manifest.json"

LEDGER_DBT_PROJECT = DbtProject(
    project_dir=DBT_PROJECT_DIR, profiles_dir=DBT_PROJECT_DIR, target_path=MANIFEST_DIR
)


def _newest_source_mtime() -> float:
    watched = [DBT_PROJECT_DIR / "dbt_project.yml", DBT_PROJECT_DIR / "profiles.yml"]
    for folder in ("models", "macros", "data-tests"):
        watched += [p for p in (DBT_PROJECT_DIR / folder).rglob("*") if p.is_file()]
    return max(p.stat().st_mtime for p in watched)


def prepare_manifest() -> Path:
    """Parse the dbt project when its manifest is missing or older than its sources.

    The manifest depends only on the project files, not on any warehouse, so one copy in
    dbt/target serves every home; a lock keeps parallel test workers from parsing over each other.
    """
    MANIFEST_DIR.mkdir(parents=True, exist_ok=True)
    with open(MANIFEST_DIR / ".parse.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if MANIFEST_PATH.exists() and MANIFEST_PATH.stat().st_mtime >= _newest_source_mtime():
            return MANIFEST_PATH
        with tempfile.TemporaryDirectory() as scratch:
            # The profile names the warehouse through a var; parsing never opens it.
            parse_vars = {
                "warehouse_path": str(Path(scratch) / "parse.duckdb"),
                **vocabulary.dbt_vars(),
            }
            result = dbtRunner().invoke(
                [
                    "parse",
                    "--quiet",
                    "--project-dir",
                    str(DBT_PROJECT_DIR),
                    "--profiles-dir",
                    str(DBT_PROJECT_DIR),
                    "--target-path",
                    str(MANIFEST_DIR),
                    "--log-path",
                    scratch,
                    "--no-send-anonymous-usage-stats",
                    "--vars",
                    json.dumps(parse_vars),
                ]
            )
        if not result.success:
            raise RuntimeError(f"dbt parse failed for {DBT_PROJECT_DIR}: {result.exception}")
    return MANIFEST_PATH


def build_dbt_assets(manifest: Path) -> AssetsDefinition:
    """The dbt models and tests as one multi-asset, from a prepared manifest."""

    @dbt_assets(manifest=manifest, project=LEDGER_DBT_PROJECT, name="ledger_dbt_models")
    def ledger_dbt_models(
        context: AssetExecutionContext, dbt: DbtCliResource, warehouse: LedgerWarehouse
    ) -> Iterator:
        settings = warehouse.settings()
        settings.home.mkdir(parents=True, exist_ok=True)
        prepare_engine(settings)
        with warehouse.connect(read_only=True) as con:
            incremental = refresh_mode(con) == "incremental"
        spawning_dbt()
        invocation = dbt.cli(
            dbt_build_args(settings, incremental=incremental),
            context=context,
            target_path=settings.dbt_target_dir,
        )
        yield from invocation.stream()
        if settings.engine == "spark":
            from ledger.pipeline.spark import remove_refresh_scratch

            remove_refresh_scratch(settings)

    return ledger_dbt_models


def dbt_executable() -> str:
    """The dbt of this interpreter's environment, whether or not the venv is on PATH: its
    `ledger-dbt` (dbt that dies with the build, ledger/pipeline/dbt_child.py), else plain dbt."""
    for name in ("ledger-dbt", "dbt"):
        executable = Path(sys.executable).parent / name
        if executable.exists():
            return str(executable)
    return "dbt"


def dbt_resource() -> DbtCliResource:
    return DbtCliResource(
        project_dir=LEDGER_DBT_PROJECT,
        profiles_dir=str(DBT_PROJECT_DIR),
        dbt_executable=dbt_executable(),
    )


def run_dbt(settings: Settings, args: Sequence[str]) -> None:
    """`dbt <args>` on the warehouse of `settings`, through the same resource and flags as the
    pipeline's asset: for the partial builds of tests and tools that need only some models.

    Raises `DbtRunError` naming the command and where dbt's log is when dbt fails.
    """
    settings.home.mkdir(parents=True, exist_ok=True)
    if args and args[0] in {"build", "run", "test", "seed"}:
        prepare_engine(settings)
    spawning_dbt()
    try:
        dbt_resource().cli(
            [*_one_word_selections(args), *dbt_run_flags(settings)],
            manifest=prepare_manifest(),
            target_path=settings.dbt_target_dir,
        ).wait()
    except DagsterDbtCliRuntimeError as exc:
        raise DbtRunError(
            f"dbt {' '.join(args)} failed on {settings.warehouse_path}: {exc}\n"
            f"details: {settings.home / 'dbt_logs' / 'dbt.log'}"
        ) from exc


def _one_word_selections(args: Sequence[str]) -> list[str]:
    """`--select a b` as `--select "a b"`: dagster-dbt takes one value after a selection flag
    (dbt reads a space-separated value as the same union)."""
    joined: list[str] = []
    selecting = False
    for arg in args:
        if arg in ("--select", "-s", "--exclude", "--models", "-m"):
            joined.append(arg)
            joined.append("")
            selecting = True
        elif selecting and not arg.startswith("-"):
            joined[-1] = f"{joined[-1]} {arg}".strip()
        else:
            joined.append(arg)
            selecting = False
    return joined
