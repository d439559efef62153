"""How dbt is invoked on an installation's warehouse, and the reference data it reads.

    with connect(settings.warehouse_path) as con:
        prepare_reference(settings, con)      # validated reference data -> schema `reference`
    dbt_build_args(settings)                  # THE `dbt build` of the pipeline (Dagster asset)

Everything dbt needs travels on its command line, never through `os.environ`: the warehouse path
(`--vars warehouse_path`, read by `dbt/profiles.yml`), the reporting currency, time zone and the
vocabulary (`ledger.vocabulary.dbt_vars`), the log and target paths under the home, so two homes
(a test and the demo) never share `dbt/target`.
"""

from __future__ import annotations

import json
import threading

import duckdb
from dbt.cli.main import dbtRunner, dbtRunnerResult

from ledger import vocabulary
from ledger.reference import load_reference, write_reference_tables
from ledger.settings import DBT_PROJECT_DIR, Settings

# dbt-duckdb keeps one database instance per process: one in-process run at a time.
_DBT_LOCK = threading.Lock()


class DbtRunError(RuntimeError):
    """A dbt invocation failed; the message names the failed nodes and what to look at."""


# dbt/profiles.yml: the target of each engine (`LEDGER_ENGINE`).
DBT_TARGETS = {"duckdb": "local", "spark": "spark"}


def dbt_vars(settings: Settings) -> dict:
    """The vars of every invocation: the warehouse, the reporting frame and the vocabulary."""
    engine_vars = {}
    if settings.engine == "spark":
        from ledger.spark import spark_vars

        engine_vars = spark_vars(settings)
    return {
        "warehouse_path": str(settings.warehouse_path),
        "reporting_currency": settings.reporting_currency,
        "timezone": settings.timezone,
        **vocabulary.dbt_vars(),
        **engine_vars,
    }


def dbt_run_flags(settings: Settings) -> list[str]:
    """The flags every dbt command of this installation takes (the Dagster resource adds the
    project, profiles and target paths itself)."""
    return [
        "--target",
        DBT_TARGETS[settings.engine],
        "--vars",
        json.dumps(dbt_vars(settings)),
        "--log-path",
        str(settings.home / "dbt_logs"),
        "--no-send-anonymous-usage-stats",
    ]


def dbt_build_args(settings: Settings) -> list[str]:
    """THE `dbt build` of the pipeline: the one place its arguments are decided.

    The Dagster asset `ledger_dbt_models` runs exactly this through `DbtCliResource`.
    """
    return ["build", *dbt_run_flags(settings)]


def prepare_engine(settings: Settings) -> None:
    """What the engine needs before dbt runs: on Spark, the sources exported as Parquet
    (`ledger.spark.export_sources`); nothing on DuckDB, which reads the warehouse itself."""
    if settings.engine == "spark":
        from ledger.spark import export_sources

        export_sources(settings)


def prepare_reference(settings: Settings, con: duckdb.DuckDBPyConnection) -> None:
    """Load and validate the reference files, then (re)write schema `reference` in one transaction.

    Raises `ledger.reference.ReferenceDataError` (file, line, rule, fix) before dbt ever runs.
    """
    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    write_reference_tables(con, ref)


def dbt_args(settings: Settings, args: list[str]) -> list[str]:
    """`args` with the project, profile and target paths and the flags of this installation."""
    return [
        *args,
        "--project-dir",
        str(DBT_PROJECT_DIR),
        "--profiles-dir",
        str(DBT_PROJECT_DIR),
        "--target-path",
        str(settings.dbt_target_dir),
        *dbt_run_flags(settings),
    ]


def failed_nodes(result: dbtRunnerResult) -> list[str]:
    """`unique_id: status: message` for each node of `result` that errored or failed."""
    failures = []
    for node_result in getattr(result.result, "results", None) or []:
        status = str(getattr(node_result, "status", ""))
        if status.lower().split(".")[-1] in {"error", "fail", "runtimeerr"}:
            message = (getattr(node_result, "message", "") or "").strip().splitlines()
            first_line = message[0] if message else ""
            failures.append(f"{node_result.node.unique_id}: {status} {first_line}".rstrip())
    return failures


def _release_warehouse() -> None:
    """Close the DuckDB handle dbt-duckdb keeps open in this process after a run.

    dbt-duckdb caches its database instance in a class attribute (there is no public API to close
    it); left open, it holds the file's lock and makes any later read-only connection of this
    process fail with "different configuration".
    """
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    with DuckDBConnectionManager._LOCK:
        environment = DuckDBConnectionManager._ENV
        DuckDBConnectionManager._ENV = None
        if environment is not None:
            environment.close()


def run_dbt(settings: Settings, args: list[str]) -> dbtRunnerResult:
    """Run `dbt <args>` on this installation's warehouse; raise `DbtRunError` if it fails."""
    settings.home.mkdir(parents=True, exist_ok=True)
    if args and args[0] in {"build", "run", "test", "seed"}:
        prepare_engine(settings)
    with _DBT_LOCK:
        try:
            result = dbtRunner().invoke(dbt_args(settings, args))
        finally:
            _release_warehouse()
    if result.success:
        return result
    failures = failed_nodes(result)
    lines = [f"dbt {' '.join(args)} failed on {settings.warehouse_path}"]
    if failures:
        lines.append("failed nodes:")
        lines += [f"  - {failure}" for failure in failures]
    if result.exception is not None:
        lines.append(f"error: {result.exception}")
    lines.append(
        f"details: {settings.home / 'dbt_logs' / 'dbt.log'}; re-run with `ledger build` once fixed"
    )
    raise DbtRunError("\n".join(lines))
