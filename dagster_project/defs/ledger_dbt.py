"""The dbt project (staging -> intermediate -> marts) as Dagster assets through dagster-dbt."""

import fcntl
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from dagster import AssetExecutionContext
from dagster_dbt import DbtCliResource, DbtProject, dbt_assets
from dbt.cli.main import dbtRunner

from dagster_project.defs.resources import LedgerWarehouse
from ledger.settings import DBT_PROJECT_DIR
from ledger.transform import dbt_env, dbt_vars

MANIFEST_DIR = DBT_PROJECT_DIR / "target"
MANIFEST_PATH = MANIFEST_DIR / "manifest.json"


def _newest_source_mtime() -> float:
    watched = [DBT_PROJECT_DIR / "dbt_project.yml"]
    for folder in ("models", "macros", "data-tests"):
        watched += [p for p in (DBT_PROJECT_DIR / folder).rglob("*") if p.is_file()]
    return max(p.stat().st_mtime for p in watched)


def ensure_manifest() -> Path:
    """Parse the dbt project when its manifest is missing or older than its sources.

    Dagster needs the manifest to know the assets. It depends only on the project files, not on
    any warehouse, so one copy in dbt/target serves every home; a lock keeps parallel test
    workers from parsing over each other.
    """
    MANIFEST_DIR.mkdir(parents=True, exist_ok=True)
    with open(MANIFEST_DIR / ".parse.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if MANIFEST_PATH.exists() and MANIFEST_PATH.stat().st_mtime >= _newest_source_mtime():
            return MANIFEST_PATH
        saved = dict(os.environ)
        with tempfile.TemporaryDirectory() as scratch:
            # The profile names the warehouse through an env var; parsing never opens it.
            os.environ["LEDGER_WAREHOUSE_PATH"] = str(Path(scratch) / "parse.duckdb")
            os.environ["DBT_LOG_PATH"] = scratch
            try:
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
                    ]
                )
            finally:
                os.environ.clear()
                os.environ.update(saved)
        if not result.success:
            raise RuntimeError(f"dbt parse failed for {DBT_PROJECT_DIR}: {result.exception}")
    return MANIFEST_PATH


LEDGER_DBT_PROJECT = DbtProject(
    project_dir=DBT_PROJECT_DIR, profiles_dir=DBT_PROJECT_DIR, target_path=MANIFEST_DIR
)


@dbt_assets(manifest=ensure_manifest(), project=LEDGER_DBT_PROJECT, name="ledger_dbt_models")
def ledger_dbt_models(
    context: AssetExecutionContext, dbt: DbtCliResource, warehouse: LedgerWarehouse
) -> Iterator:
    settings = warehouse.settings()
    settings.home.mkdir(parents=True, exist_ok=True)
    saved = dict(os.environ)
    # The dbt subprocess inherits the environment: point its profile at this run's warehouse.
    os.environ.update(dbt_env(settings))
    try:
        invocation = dbt.cli(
            ["build", "--vars", json.dumps(dbt_vars(settings))],
            context=context,
            target_path=settings.dbt_target_dir,
        )
    finally:
        os.environ.clear()
        os.environ.update(saved)
    yield from invocation.stream()


def dbt_resource() -> DbtCliResource:
    # The dbt of this interpreter's environment, whether or not the venv is on PATH.
    executable = Path(sys.executable).parent / "dbt"
    return DbtCliResource(
        project_dir=LEDGER_DBT_PROJECT,
        profiles_dir=str(DBT_PROJECT_DIR),
        dbt_executable=str(executable) if executable.exists() else "dbt",
    )
