"""Run the dbt project (`dbt/`) against the warehouse, in-process.

    with connect(settings.warehouse_path) as con:
        prepare_reference(settings, con)      # validated reference data -> schema `reference`
    run_dbt(settings, ["build"])              # staging -> intermediate -> marts, tests included

dbt reads the warehouse path from `LEDGER_WAREHOUSE_PATH` (see `dbt/profiles.yml`) and the
reporting currency and time zone from its vars. Artefacts go to `settings.dbt_target_dir` and logs
under the home, so two homes (a test and the demo) never share `dbt/target`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
from dbt.cli.main import dbtRunner, dbtRunnerResult

from ledger.reference import load_reference, write_reference_tables
from ledger.settings import DBT_PROJECT_DIR, Settings

# dbt reads its profile's env_var() from os.environ: one in-process run at a time per process, so
# two runs never see each other's warehouse path.
_DBT_LOCK = threading.Lock()


class DbtRunError(RuntimeError):
    """A dbt invocation failed; the message names the failed nodes and what to look at."""


def dbt_vars(settings: Settings) -> dict[str, str]:
    return {"reporting_currency": settings.reporting_currency, "timezone": settings.timezone}


def dbt_env(settings: Settings) -> dict[str, str]:
    return {
        "LEDGER_WAREHOUSE_PATH": str(settings.warehouse_path),
        # Keep dbt's own files out of the repository tree and per home.
        "DBT_LOG_PATH": str(settings.home / "dbt_logs"),
        "DBT_TARGET_PATH": str(settings.dbt_target_dir),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }


def prepare_reference(settings: Settings, con: duckdb.DuckDBPyConnection) -> None:
    """Load and validate the reference files, then (re)write schema `reference` in one transaction.

    Raises `ledger.reference.ReferenceDataError` (file, line, rule, fix) before dbt ever runs.
    """
    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    write_reference_tables(con, ref)


def dbt_args(settings: Settings, args: list[str]) -> list[str]:
    """`args` with the project, profile, target path and vars this installation needs."""
    return [
        *args,
        "--project-dir",
        str(DBT_PROJECT_DIR),
        "--profiles-dir",
        str(DBT_PROJECT_DIR),
        "--target-path",
        str(settings.dbt_target_dir),
        "--vars",
        json.dumps(dbt_vars(settings)),
    ]


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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
    with _DBT_LOCK, _environment(dbt_env(settings)):
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
