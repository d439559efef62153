"""How dbt is invoked on an installation's warehouse, and the reference data it reads.

    with connect(settings.warehouse_path) as con:
        prepare_reference(settings, con)      # validated reference data -> schema `reference`
    dbt_build_args(settings, incremental=...) # THE `dbt build` of the pipeline (Dagster asset)

Everything dbt needs travels on its command line, never through `os.environ`: the warehouse path
(`--vars warehouse_path`, read by `dbt/profiles.yml`), the reporting currency, time zone and the
vocabulary (`ledger.core.vocabulary.dbt_vars`), the log and target paths under the home, so two homes
(a test and the demo) never share `dbt/target`.
"""

from __future__ import annotations

import json

import duckdb

from ledger.core import vocabulary
from ledger.core.settings import Settings
from ledger.core.slo_rules import parse_burn_rate_rules
from ledger.pipeline.spark import export_sources, spark_vars
from ledger.reference import load_reference, write_reference_tables
from ledger.reference.planning import load_planning, write_planning_table


class DbtRunError(RuntimeError):
    """A dbt invocation failed; the message names the failed nodes and what to look at."""


# dbt/profiles.yml: the target of each engine (`LEDGER_ENGINE`); Spark behind a Spark Connect
# server (`LEDGER_SPARK_REMOTE`) is `spark_connect`.
DBT_TARGETS = {"duckdb": "local", "spark": "spark"}
SPARK_CONNECT_TARGET = "spark_connect"


def dbt_target(settings: Settings) -> str:
    """The dbt target (dbt/profiles.yml) that runs this installation's builds."""
    if settings.engine == "spark" and settings.spark_remote:
        return SPARK_CONNECT_TARGET
    return DBT_TARGETS[settings.engine]


# The vars that say where a build runs, not what it computes: a change of them leaves earlier
# results usable (ledger.pipeline.plan's fingerprint leaves them out).
PLACE_VARS = frozenset({"warehouse_path", "spark_remote", "build_memory_limit"})


def dbt_vars(settings: Settings) -> dict:
    """The vars of every invocation: the warehouse, the reporting frame and the vocabulary."""
    if settings.engine == "spark":
        engine_vars = spark_vars(settings)
    else:
        # dbt-duckdb sets it on each of its connections (dbt/profiles.yml).
        engine_vars = {"build_memory_limit": settings.build_memory_limit}
    return {
        "warehouse_path": str(settings.warehouse_path),
        "reporting_currency": settings.reporting_currency,
        "timezone": settings.timezone,
        "slo_window_days": settings.slo_window_days,
        "burn_rate_rules": [
            rule.as_dbt() for rule in parse_burn_rate_rules(settings.burn_rate_rules)
        ],
        **vocabulary.dbt_vars(),
        **engine_vars,
    }


def dbt_run_flags(settings: Settings, *, refresh_mode: str = "full") -> list[str]:
    """The flags every dbt command of this installation takes (the Dagster resource adds the
    project, profiles and target paths itself). `refresh_mode` 'full' recomputes every row;
    'incremental' only what `ledger.pipeline.plan` planned (dbt/macros/incremental_refresh.sql)."""
    return [
        "--target",
        dbt_target(settings),
        "--vars",
        json.dumps({**dbt_vars(settings), "refresh_mode": refresh_mode}),
        "--log-path",
        str(settings.home / "dbt_logs"),
        "--no-send-anonymous-usage-stats",
    ]


def dbt_build_args(settings: Settings, *, incremental: bool = False) -> list[str]:
    """THE `dbt build` of the pipeline: the one place its arguments are decided.

    The Dagster asset `ledger_dbt_models` runs exactly this through `DbtCliResource`, incremental
    when the refresh plan (`ledger.pipeline.plan.plan_refresh`) says so, else with `--full-refresh`.
    """
    # Unit tests pin model logic on fixed inputs, not data: full builds run them, on Spark only
    # when asked (`Settings.runs_dbt_unit_tests`).
    if incremental:
        return [
            "build",
            "--exclude-resource-type",
            "unit_test",
            *dbt_run_flags(settings, refresh_mode="incremental"),
        ]
    skipped = [] if settings.runs_dbt_unit_tests else ["--exclude-resource-type", "unit_test"]
    return ["build", "--full-refresh", *skipped, *dbt_run_flags(settings, refresh_mode="full")]


def prepare_engine(settings: Settings) -> None:
    """What the engine needs before dbt runs: on Spark, the sources exported as Parquet
    (`ledger.pipeline.spark.export_sources`); nothing on DuckDB, which reads the warehouse itself."""
    if settings.engine == "spark":
        export_sources(settings)


def prepare_reference(settings: Settings, con: duckdb.DuckDBPyConnection) -> None:
    """Load and validate the reference files, then (re)write schema `reference` in one transaction.

    Raises `ledger.reference.ReferenceDataError` (file, line, rule, fix) before dbt ever runs.
    """
    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    planning = load_planning(settings.reference_dir)
    write_reference_tables(con, ref)
    write_planning_table(con, planning)
