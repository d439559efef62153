"""LEDGER_ENGINE=spark: what the dbt project needs to run on Apache Spark, and what it leaves.

    export_sources(settings)   # before dbt: the raw manifest and the small tables, as Parquet
    dbt build --target spark   # on-run-start `register_sources` names them raw.* / reference.*
    marts_parquet(settings)    # after dbt: each marts table as the Parquet files Spark wrote

The raw events are never copied: Spark reads the raw layer's Parquet files in place, exactly the
ones the manifest `raw.event_files` lists (a file not in the manifest does not exist). The manifest
(absolute paths), the quarantine, the ingested-files manifest, the reference tables and the
imported provider bills are small and are written once per run under
`<home>/spark/sources/<schema>/<table>/`, from one read-only snapshot of the warehouse. Every model Spark builds is a Parquet table under
`<home>/spark/tables/<schema>/<model>/`.

Incremental builds (`ledger.pipeline.plan`): the plan's tables (ops.refresh_*) are exported with the
sources, and so is the list of model tables earlier builds left (`ops/spark_model_tables`), which
an incremental run registers in Spark's in-memory catalog (dbt/macros/engine/spark_incremental.sql).
What a refresh rewrote through `<home>/spark/refresh_scratch/` is removed after dbt (and again
before the next run, should a build have died).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb

from ledger.core.settings import DBT_PROJECT_DIR, Settings
from ledger.core.sql import identifier, literal
from ledger.finops.provider_costs import TABLE as PROVIDER_COSTS
from ledger.finops.provider_costs import ensure_provider_costs_table
from ledger.pipeline.dbt_manifest import built_models
from ledger.warehouse import connect, raw_root

# Spark's logging configuration (quiet unless LEDGER_SPARK_LOG_LEVEL asks for more).
LOG4J_PROPERTIES = DBT_PROJECT_DIR / "spark" / "log4j2.properties"

# The sources besides raw.events: small, exported whole on each run.
EXPORTED_TABLES = (
    "raw.quarantine",
    "raw.ingested_files",
    "reference.rate_card",
    "reference.fx_rates",
    "reference.price_plans",
    "reference.latency_budgets",
    "reference.provider_aliases",
    "reference.model_aliases",
    "reference.spend_budgets",
    "reference.meta",
    "reference.planning_settings",
)

# Every source table Spark names, the imported provider bills (`ledger reconcile import`) among them:
# exported as an empty table of the same columns until a bill is imported, so that Spark always has
# the relation DuckDB may lack. dbt's on-run-start (`register_sources`) reads this list.
SOURCE_TABLES = (*EXPORTED_TABLES, PROVIDER_COSTS)

# The refresh plan of `ledger.pipeline.plan.plan_refresh` (exported when the warehouse has it).
PLAN_TABLES = (
    "ops.refresh_run",
    "ops.refresh_sessions",
    "ops.refresh_dates",
    "ops.refresh_weeks",
    "ops.refresh_events",
)

# The schemas of the models Spark writes as tables.
MODEL_SCHEMAS = ("intermediate", "marts")


def sources_dir(settings: Settings) -> Path:
    return settings.spark_dir / "sources"


def tables_dir(settings: Settings) -> Path:
    return settings.spark_dir / "tables"


def scratch_dir(settings: Settings) -> Path:
    return settings.spark_dir / "refresh_scratch"


def remove_refresh_scratch(settings: Settings) -> None:
    """What a Spark refresh rewrote its tables through (after dbt, and before the next run)."""
    shutil.rmtree(scratch_dir(settings), ignore_errors=True)


# The column the large marts are partitioned by on Spark (the ISO week's Monday; a Spark-only
# column, left out of what is published: dbt/macros/engine/spark_incremental.sql).
PARTITION_COLUMN = "refresh_week"


def table_parquet(folder: Path) -> str | None:
    """The Parquet glob of a table folder Spark wrote (its partition folders' files when it is
    partitioned by week), None if it holds no file."""
    for pattern in ("*.parquet", f"{PARTITION_COLUMN}=*/*.parquet"):
        if any(folder.glob(pattern)):
            return str(folder / pattern)
    return None


def model_tables(settings: Settings) -> dict[str, Path]:
    """`<schema>.<model>` -> folder of every model table an earlier Spark build wrote."""
    found = {}
    for schema in MODEL_SCHEMAS:
        folder = tables_dir(settings) / schema
        if folder.is_dir():
            for table in sorted(p for p in folder.iterdir() if p.is_dir()):
                if table_parquet(table):
                    found[f"{schema}.{table.name}"] = table
    return found


def model_parquet(settings: Settings, qualified: str) -> str | None:
    """The Parquet glob of the model table `<schema>.<model>` Spark wrote, None if there is none."""
    folder = model_tables(settings).get(qualified)
    return table_parquet(folder) if folder else None


def spark_vars(settings: Settings) -> dict[str, str]:
    """The dbt vars of a Spark invocation (read by dbt/profiles.yml and dbt_project.yml)."""
    found = {
        "spark_dir": str(settings.spark_dir),
        "spark_log4j": str(LOG4J_PROPERTIES),
        "spark_source_tables": list(SOURCE_TABLES),
        "spark_plan_tables": list(PLAN_TABLES),
    }
    if settings.spark_remote:
        found["spark_remote"] = settings.spark_remote
    return found


# What a Spark Connect server must be started with to serve the ledger (`spark-submit --conf`):
# the static settings the `spark` target sets on its local session, which a client cannot set on
# a running server. The SQL settings that keep money exact travel with each session
# (dbt/profiles.yml). Any cluster manager behind it (`--master`) serves.
CONNECT_SERVER_CONF = {
    # No metastore to keep in step with the Parquet folders (an incremental run registers them);
    # a cluster with a Hive, Glue or Unity catalogue uses its own.
    "spark.sql.catalogImplementation": "in-memory",
    "spark.ui.showConsoleProgress": "false",
}


def export_sources(settings: Settings) -> None:
    """Write the manifest of raw event files and the small source tables for Spark.

    Replaces `<home>/spark/sources` whole: the folder is written beside it and renamed over it.
    Also removes what an earlier refresh left in `<home>/spark/refresh_scratch`.
    """
    remove_refresh_scratch(settings)
    target = sources_dir(settings)
    staging = target.with_name(target.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    with connect(settings.warehouse_path, read_only=True) as con:
        root = raw_root(con)
        present = {
            f"{schema}.{name}"
            for schema, name in con.execute(
                "select table_schema, table_name from information_schema.tables "
                "where table_catalog = current_database() and table_schema in ('ops', 'imports')"
            ).fetchall()
        }
        for table in EXPORTED_TABLES + tuple(t for t in PLAN_TABLES if t in present):
            schema, name = table.split(".")
            folder = staging / schema / name
            folder.mkdir(parents=True)
            con.execute(
                f"copy (select * from {table}) to {literal(str(folder / 'part-0.parquet'))}"
            )
        folder = staging.joinpath(*PROVIDER_COSTS.split("."))
        folder.mkdir(parents=True)
        bills = literal(str(folder / "part-0.parquet"))
        if PROVIDER_COSTS in present:
            con.execute(
                f"copy (select * from {PROVIDER_COSTS} order by file_name, line_number) to {bills}"
            )
        else:
            with duckdb.connect() as empty:
                ensure_provider_costs_table(empty)
                empty.execute(f"copy {PROVIDER_COSTS} to {bills}")
        folder = staging / "raw" / "event_files"
        folder.mkdir(parents=True)
        con.execute(
            f"copy (select {literal(str(root))} as root, path from raw.event_files "
            f"order by path) to {literal(str(folder / 'part-0.parquet'))}"
        )
        # raw.events with no row: its schema, so that Spark's view has its columns with no file.
        folder = staging / "raw" / "events_schema"
        folder.mkdir(parents=True)
        con.execute(
            f"copy (select * from raw.events where false) "
            f"to {literal(str(folder / 'part-0.parquet'))}"
        )
    folder = staging / "ops" / "spark_model_tables"
    folder.mkdir(parents=True)
    with duckdb.connect() as listing:
        listing.execute(
            "create table spark_model_tables "
            "(table_schema varchar, table_name varchar, location varchar)"
        )
        rows = [[*name.split("."), str(path)] for name, path in model_tables(settings).items()]
        if rows:
            listing.executemany("insert into spark_model_tables values (?, ?, ?)", rows)
        listing.execute(f"copy spark_model_tables to {literal(str(folder / 'part-0.parquet'))}")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


def marts_parquet(settings: Settings) -> Iterator[tuple[str, str | None]]:
    """(table name, Parquet glob) of every marts table of the last Spark build, by name; the glob
    is None for a table without a file (a week-partitioned table without a row: Spark writes no
    file for it, only its folder)."""
    marts = tables_dir(settings) / "marts"
    if not marts.is_dir():
        return
    for folder in sorted(p for p in marts.iterdir() if p.is_dir()):
        yield folder.name, table_parquet(folder)


def marts_selects(con: duckdb.DuckDBPyConnection, settings: Settings) -> dict[str, str]:
    """`marts.<table>` -> a DuckDB select of the Parquet files Spark wrote for it, timestamps naive
    UTC again (Spark writes instants, which DuckDB reads as TIMESTAMP WITH TIME ZONE). A table
    partitioned by week has the columns DuckDB's has, in the same order: its files hold every
    column but the partition column, which is left out. A table without a file is an empty select
    of its contract's columns."""
    selects = {}
    for name, files in marts_parquet(settings):
        if files is None:
            selects[f"marts.{name}"] = empty_select(settings, name)
            continue
        partitioned = f"/{PARTITION_COLUMN}=" in files
        relation = f"read_parquet({literal(files)}, hive_partitioning = {str(partitioned).lower()})"
        columns = con.execute(f"describe select * from {relation}").fetchall()
        listed = []
        for column, kind, *_ in columns:
            if partitioned and column == PARTITION_COLUMN:
                continue
            quoted = identifier(column)
            if kind == "TIMESTAMP WITH TIME ZONE":
                listed.append(f"cast({quoted} at time zone 'UTC' as timestamp) as {quoted}")
            else:
                listed.append(quoted)
        selects[f"marts.{name}"] = f"select {', '.join(listed)} from {relation}"
    return selects


def empty_select(settings: Settings, name: str) -> str:
    """No rows, with the columns of the mart's enforced contract in their order (the order a
    contracted table has on either engine), from the build's dbt manifest."""
    columns = built_models(settings).get(name, {}).get("columns") or {}
    typed = [(column, spec.get("data_type")) for column, spec in columns.items()]
    if not typed or any(kind is None for _, kind in typed):
        manifest = settings.dbt_target_dir / "manifest.json"
        raise RuntimeError(
            f"marts.{name}: the Spark build wrote no Parquet file for it and {manifest} gives no "
            "typed column list to publish it empty; give the model an enforced contract, or run "
            "`ledger build` again to rebuild it"
        )
    listed = ", ".join(f"cast(null as {kind}) as {identifier(column)}" for column, kind in typed)
    return f"select {listed} where false"


def connect_marts(settings: Settings) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB whose schema `marts` views the marts of the last Spark build (what the
    pipeline's own checks read before the marts are published)."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.execute("create schema marts")
    for table, select in marts_selects(con, settings).items():
        con.execute(f"create view {table} as {select}")
    return con
