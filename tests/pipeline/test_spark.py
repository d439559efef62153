"""The same dbt project on Apache Spark (LEDGER_ENGINE=spark), exact to the cent (issue #12).

`spark_built_warehouse` lands the events of `ledger_built_warehouse` (the same simulated traffic
and hand-made sessions, so the same events) in a home of its own in two steps, each followed by the
pipeline's job with the Spark engine, then the publish step, which serves Spark's marts to the
readers:
- the first day's files in a full build on a local pyspark in dbt's process (dbt-spark's `session`
  method, `local[2]`, the `spark` target);
- then the second day's files, the hand-made sessions and the provider bill in an incremental
  refresh (ledger.pipeline.plan, dbt/macros/engine/spark_incremental.sql) on a real cluster
  (issue #30): a Spark Connect server in front of a standalone master and one worker, each its own
  process on loopback, the executors further processes (tests/support/spark_cluster.py), reached
  through the `spark_connect` target (LEDGER_SPARK_REMOTE).
Every comparison below is therefore of an incremental build on the cluster with DuckDB's full
build. One pair of Spark builds serves every test here (a Spark start alone takes tens of seconds).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from decimal import Decimal

import duckdb
import pytest

from ledger.commands.build import run_build
from ledger.core.settings import REPO_ROOT, Settings
from ledger.finops.provider_costs import import_provider_costs
from ledger.ingest import ingest_paths
from ledger.pipeline.published_parts import OPS_TABLES
from ledger.pipeline.spark import tables_dir
from ledger.pipeline.transform import dbt_build_args, dbt_run_flags, dbt_target
from ledger.serving.export import export_session_ledger
from ledger.simulate import simulate
from ledger.warehouse import append_events, connect
from tests.support.homes import (
    INGEST_TIME,
    LEDGER_PROVIDER_BILL,
    LEDGER_SIMULATION,
    LedgerWarehouse,
    dbt_run_results,
    ledger_hand_made_events,
)
from tests.support.ledger_by_hand import check_every_session
from tests.support.spark_cluster import loopback_spark_cluster


def test_ledger_engine_selects_the_dbt_target_and_spark_gets_its_folder():
    duck = Settings.from_env({"LEDGER_HOME": "/srv/ledger"})
    spark = Settings.from_env({"LEDGER_HOME": "/srv/ledger", "LEDGER_ENGINE": "spark"})
    assert duck.engine == "duckdb"
    assert dbt_run_flags(duck)[:2] == ["--target", "local"]
    assert "spark_dir" not in json.loads(dbt_run_flags(duck)[3])
    assert dbt_run_flags(spark)[:2] == ["--target", "spark"]
    spark_vars = json.loads(dbt_run_flags(spark)[3])
    assert spark_vars["spark_dir"] == "/srv/ledger/spark"
    assert spark_vars["spark_log4j"] == str(REPO_ROOT / "dbt" / "spark" / "log4j2.properties")


def test_a_full_build_runs_the_unit_tests_on_duckdb_and_on_spark_only_when_asked():
    def build(environ: dict[str, str], *, incremental: bool = False) -> list[str]:
        args = dbt_build_args(Settings.from_env(environ), incremental=incremental)
        return args[: args.index("--target")]

    skipping = ["--exclude-resource-type", "unit_test"]
    assert build({}) == ["build", "--full-refresh"]
    assert build({"LEDGER_ENGINE": "spark"}) == ["build", "--full-refresh", *skipping]
    assert build({"LEDGER_ENGINE": "spark", "LEDGER_DBT_UNIT_TESTS": "true"}) == [
        "build",
        "--full-refresh",
    ]
    assert build({"LEDGER_DBT_UNIT_TESTS": "false"}) == ["build", "--full-refresh", *skipping]
    # An incremental build never runs them, whatever the setting.
    assert build({"LEDGER_DBT_UNIT_TESTS": "true"}, incremental=True) == ["build", *skipping]


def test_a_spark_connect_address_selects_the_spark_connect_target():
    remote = Settings.from_env(
        {"LEDGER_ENGINE": "spark", "LEDGER_SPARK_REMOTE": "sc://spark.internal:15002"}
    )
    assert dbt_target(remote) == "spark_connect"
    assert json.loads(dbt_run_flags(remote)[3])["spark_remote"] == "sc://spark.internal:15002"
    # DuckDB ignores it; an address that is not Spark Connect's is refused.
    duck = Settings.from_env({"LEDGER_SPARK_REMOTE": "sc://spark.internal:15002"})
    assert dbt_target(duck) == "local"
    with pytest.raises(ValueError, match="LEDGER_SPARK_REMOTE must be a Spark Connect address"):
        Settings.from_env({"LEDGER_SPARK_REMOTE": "spark://spark.internal:7077"})


def test_an_unknown_engine_is_refused_naming_the_variable():
    with pytest.raises(ValueError, match="LEDGER_ENGINE must be one of duckdb, spark, got 'flink'"):
        Settings.from_env({"LEDGER_ENGINE": "flink"})


@dataclass(frozen=True)
class SparkWarehouse(LedgerWarehouse):
    first_build_results: dict[str, str]  # the first (full) build's `dbt build`
    refresh_lines: list[str]  # the incremental build's summary
    refresh_target: str  # the dbt target of the incremental build (its run_results.json)
    cluster_state: dict  # the standalone master's account, right after the incremental build
    cluster_executors: list[str]  # `<application>/<executor>` folders the worker ran
    cluster_leftovers: list[int]  # processes of the cluster still alive after it was stopped


# The first of the simulation's two days (LEDGER_SIMULATION); the full build sees only its files.
FIRST_DAY = "2026-11-15"


@pytest.fixture(scope="session")
def spark_built_warehouse(
    ledger_built_warehouse: LedgerWarehouse, tmp_path_factory: pytest.TempPathFactory
) -> SparkWarehouse:
    source = ledger_built_warehouse.settings
    root = tmp_path_factory.mktemp("spark")
    # LEDGER_DBT_UNIT_TESTS=true: the full build runs the unit tests on Spark, as CI would (a
    # production Spark build leaves them out), so the dispatched Spark macros are unit-tested.
    settings = source.model_copy(
        update={"home": root / "home", "engine": "spark", "dbt_unit_tests": True}
    )
    settings.ensure_dirs()
    # Files reach the landing folder day by day (the job ingests whatever the folder holds).
    simulated = root / "simulated"
    simulate(simulated, bad_row_share=0.0, duplicate_share=0.0, **LEDGER_SIMULATION)
    days = sorted(p.name for p in simulated.iterdir())
    assert days[0] == FIRST_DAY and len(days) == 2
    shutil.copytree(simulated / FIRST_DAY, settings.landing_dir / FIRST_DAY)
    ingest_paths(settings, [settings.landing_dir], ingest_time=INGEST_TIME)
    first = run_build(settings)
    assert first.success, "\n".join(first.lines)
    first_results = dbt_run_results(settings)
    shutil.copytree(simulated / days[1], settings.landing_dir / days[1])
    ingest_paths(settings, [settings.landing_dir], ingest_time=INGEST_TIME)
    with connect(settings.warehouse_path) as con:
        append_events(con, ledger_hand_made_events())
    import_provider_costs(settings, LEDGER_PROVIDER_BILL)
    with loopback_spark_cluster(
        root / "cluster", warehouse_dir=settings.spark_dir / "warehouse"
    ) as cluster:
        settings = settings.model_copy(update={"spark_remote": cluster.remote})
        outcome = run_build(settings)
        assert outcome.success, "\n".join(outcome.lines)
        state = cluster.master_state()
    executors = sorted(str(p.relative_to(cluster.work_dir)) for p in cluster.work_dir.glob("*/*"))
    run_results = json.loads((settings.dbt_target_dir / "run_results.json").read_text())
    return SparkWarehouse(
        settings,
        dbt_run_results(settings),
        first_results,
        outcome.lines,
        run_results["args"]["target"],
        state,
        executors,
        cluster.leftovers(),
    )


@pytest.mark.spark
@pytest.mark.integration
def test_the_refresh_ran_on_a_standalone_cluster_through_spark_connect(spark_built_warehouse):
    warehouse = spark_built_warehouse
    assert warehouse.refresh_target == "spark_connect"
    state = warehouse.cluster_state
    assert state["aliveworkers"] == 1
    # One application, the Connect server, on both of the worker's cores; its executors were
    # processes the worker started (one folder each), not threads of dbt's process.
    assert [(app["name"], app["cores"], app["state"]) for app in state["activeapps"]] == [
        ("voice-ledger-connect", 2, "RUNNING")
    ]
    app_id = state["activeapps"][0]["id"]
    assert warehouse.cluster_executors == [f"{app_id}/0"]
    # Master, worker, Connect server and executor all ended with the cluster.
    assert warehouse.cluster_leftovers == []


@pytest.mark.spark
@pytest.mark.integration
def test_spark_build_runs_every_model_unit_test_and_data_test_duckdb_runs(
    spark_built_warehouse, ledger_built_warehouse
):
    first, duck = spark_built_warehouse.first_build_results, ledger_built_warehouse.dbt_results
    refresh = spark_built_warehouse.dbt_results
    for results in (first, refresh):
        failed = {n: status for n, status in results.items() if status not in {"success", "pass"}}
        assert failed == {}
    assert set(first) == set(duck)
    assert sum(node.startswith("unit_test.") for node in first) >= 18
    assert "test.voice_ledger.assert_no_money_column_is_a_float" in first
    # The refresh runs every model and data test; unit tests run on full builds only.
    assert set(refresh) == {node for node in duck if not node.startswith("unit_test.")}


@pytest.mark.spark
@pytest.mark.integration
def test_the_second_spark_build_refreshes_only_what_the_new_files_touch(spark_built_warehouse):
    # The first build read the first day's files; the second day's files and the hand-made
    # sessions were refreshed (every comparison below is of this refresh with DuckDB's full build).
    lines = spark_built_warehouse.refresh_lines
    assert [line for line in lines if line.startswith("refresh:")] == [
        "refresh: incremental, 5 new raw files, 40 sessions (40 new_events), 5 dates in 2 ISO "
        "weeks (2026-11-14 .. 2026-11-18)"
    ]


@pytest.mark.spark
@pytest.mark.integration
def test_every_session_on_spark_recomputed_by_hand_matches_the_export_exactly(
    spark_built_warehouse, tmp_path
):
    # The DuckDB test itself (Decimal re-computation of every session), on Spark's published ledger.
    check_every_session(spark_built_warehouse, tmp_path)


@pytest.mark.spark
@pytest.mark.integration
def test_both_engines_export_the_identical_session_ledger(
    spark_built_warehouse, ledger_built_warehouse, tmp_path
):
    duck, spark = tmp_path / "duckdb.csv", tmp_path / "spark.csv"
    rows = export_session_ledger(ledger_built_warehouse.settings, duck)
    assert export_session_ledger(spark_built_warehouse.settings, spark) == rows > 60
    assert spark.read_bytes() == duck.read_bytes()


@pytest.mark.spark
@pytest.mark.integration
def test_spark_reconciles_the_imported_provider_bill_at_the_days_fx_rate(spark_built_warehouse):
    # tests/fixtures/ledger_provider_bill.csv, imported before the refresh: 0.123457 USD on
    # 2026-11-16 at 7.2222 is 0.8916311454 CNY; vapi's fee has no priced usage to set it against.
    with duckdb.connect(str(spark_built_warehouse.settings.published_path), read_only=True) as con:
        rows = con.execute(
            "select cast(usage_date as varchar), provider, reported_cost, reported_rows "
            "from marts.fct_reconciliation_daily order by all"
        ).fetchall()
    assert rows == [
        ("2026-11-15", "deepseek", Decimal("3.210000000000"), 1),
        ("2026-11-16", "deepseek", Decimal("2.987654000000"), 1),
        ("2026-11-16", "openai", Decimal("0.891631145400"), 1),
    ]


# Each job run loads the reference data itself: the load time is the one value that differs.
RUN_SPECIFIC_COLUMNS = {("dim_reference_meta", "loaded_at")}
# Landing files are named by absolute path, under each home's own landing folder.
LANDING_PATH_COLUMNS = {("fct_ingested_files", "path")}


def _compared(table: str, listed: list[tuple[str, str]], warehouse: LedgerWarehouse) -> str:
    """The select list of `table` that the engines must agree on, in `warehouse`'s terms."""
    landing = str(warehouse.settings.landing_dir) + "/"
    return ", ".join(
        f"replace(\"{name}\", '{landing}', '')"
        if (table, name) in LANDING_PATH_COLUMNS
        else f'"{name}"'
        for name, _ in listed
        if (table, name) not in RUN_SPECIFIC_COLUMNS
    )


def _kind(data_type: str) -> str:
    """A column type up to what the engines legitimately differ in: a decimal's precision (a sum
    widens to 38 digits in DuckDB, by 10 in Spark), the width of an integer, and a timestamp's
    zone (Spark writes every timestamp as an instant; both are UTC). A decimal of scale 0 is an
    integer: the Spark spelling of HUGEINT is DECIMAL(38, 0) (see spark_dialect.sql)."""
    if data_type.startswith("DECIMAL(") and data_type.replace(" ", "").endswith(",0)"):
        return "INTEGER"
    if data_type.startswith("DECIMAL("):
        return "DECIMAL(scale " + data_type.split(",")[1]
    if data_type in {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT"}:
        return "INTEGER"
    if data_type.startswith("TIMESTAMP"):
        return "TIMESTAMP"
    return data_type


@pytest.mark.spark
@pytest.mark.integration
def test_spark_publishes_every_mart_with_duckdbs_columns_and_rows(
    spark_built_warehouse, ledger_built_warehouse
):
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute(
            f"attach '{ledger_built_warehouse.settings.published_path}' as duck (read_only)"
        )
        con.execute(
            f"attach '{spark_built_warehouse.settings.published_path}' as spark (read_only)"
        )

        def columns(catalog: str) -> dict[str, list[tuple[str, str]]]:
            found: dict[str, list[tuple[str, str]]] = {}
            for table, column, kind in con.execute(
                "select table_name, column_name, data_type from information_schema.columns "
                "where table_catalog = ? and table_schema = 'marts' "
                "order by table_name, ordinal_position",
                [catalog],
            ).fetchall():
                # The alerts' and reviews' records published beside the marts are not dbt's.
                if table not in OPS_TABLES:
                    found.setdefault(table, []).append((column, _kind(kind)))
            return found

        duck_columns, spark_columns = columns("duck"), columns("spark")
        assert len(duck_columns) == 31  # fct_reported_costs_held among them (issue 38 point 7)
        assert spark_columns == duck_columns
        differences = {}
        for table, listed in duck_columns.items():
            duck = _compared(table, listed, ledger_built_warehouse)
            spark = _compared(table, listed, spark_built_warehouse)
            only = con.execute(
                f"select count(*) from ((select {duck} from duck.marts.{table} "
                f"except all select {spark} from spark.marts.{table}) union all "
                f"(select {spark} from spark.marts.{table} "
                f"except all select {duck} from duck.marts.{table}))"
            ).fetchone()[0]
            rows = con.execute(f"select count(*) from duck.marts.{table}").fetchone()[0]
            if only:
                differences[table] = (only, rows)
        assert differences == {}


# The marts Spark partitions by ISO week (their `partition_week_of`: the date of each row's week).
WEEK_PARTITIONED = {
    "fct_session_ledger": "business_date",
    "fct_usage_lines": "occurred_at",
    "fct_turn_latency": "business_date",
    "fct_capacity_tenant_hourly": "business_date",
    "fct_capacity_pool_hourly": "business_date",
}


@pytest.mark.spark
@pytest.mark.integration
def test_the_large_marts_are_one_folder_of_files_per_iso_week_of_their_rows(
    spark_built_warehouse,
):
    settings = spark_built_warehouse.settings
    found, expected = {}, {}
    with duckdb.connect(str(settings.published_path), read_only=True) as con:
        for table, column in WEEK_PARTITIONED.items():
            folder = tables_dir(settings) / "marts" / table
            loose = sorted(p.name for p in folder.glob("*.parquet"))
            # A folder with no file (a week emptied by a refresh) holds no rows.
            found[table] = loose + sorted(
                p.name for p in folder.glob("refresh_week=*") if any(p.glob("*.parquet"))
            )
            expected[table] = [
                f"refresh_week={week}"
                for (week,) in con.execute(
                    f"select distinct cast(cast(date_trunc('week', {column}) as date) as varchar) "
                    f"from marts.{table} order by 1"
                ).fetchall()
            ]
    assert found == expected
    # The data's two ISO weeks, both refreshed by the second build.
    assert found["fct_session_ledger"] == ["refresh_week=2026-11-09", "refresh_week=2026-11-16"]
