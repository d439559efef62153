"""The same dbt project on Apache Spark (LEDGER_ENGINE=spark), exact to the cent (issue #12).

`spark_built_warehouse` copies the DuckDB warehouse of `ledger_built_warehouse` (its raw Parquet
layer and reference data: the same events) into a home of its own and runs the pipeline's job on
it with the Spark engine: dbt-spark's `session` method on a local pyspark (`local[2]`), then the
publish step, which serves Spark's marts to the readers. One Spark build serves every test here
(a Spark start alone takes tens of seconds).
"""

from __future__ import annotations

import json

import duckdb
import pytest
from conftest import LedgerWarehouse, dbt_run_results
from test_ledger_dbt import (
    test_every_session_recomputed_by_hand_matches_the_export_exactly as check_every_session,
)

from ledger.build import run_build
from ledger.export import export_session_ledger
from ledger.settings import REPO_ROOT, Settings
from ledger.transform import dbt_run_flags
from ledger.warehouse import copy_warehouse


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


def test_an_unknown_engine_is_refused_naming_the_variable():
    with pytest.raises(ValueError, match="LEDGER_ENGINE must be one of duckdb, spark, got 'flink'"):
        Settings.from_env({"LEDGER_ENGINE": "flink"})


@pytest.fixture(scope="session")
def spark_built_warehouse(
    ledger_built_warehouse: LedgerWarehouse, tmp_path_factory: pytest.TempPathFactory
) -> LedgerWarehouse:
    source = ledger_built_warehouse.settings
    home = tmp_path_factory.mktemp("spark") / "home"
    home.mkdir()
    copy_warehouse(source.warehouse_path, home / "warehouse.duckdb")
    settings = source.model_copy(update={"home": home, "engine": "spark"})
    settings.ensure_dirs()
    outcome = run_build(settings)
    assert outcome.success, "\n".join(outcome.lines)
    return LedgerWarehouse(settings, dbt_run_results(settings))


@pytest.mark.spark
@pytest.mark.integration
def test_spark_build_runs_every_model_unit_test_and_data_test_duckdb_runs(
    spark_built_warehouse, ledger_built_warehouse
):
    spark, duck = spark_built_warehouse.dbt_results, ledger_built_warehouse.dbt_results
    failed = {node: status for node, status in spark.items() if status not in {"success", "pass"}}
    assert failed == {}
    assert set(spark) == set(duck)
    assert sum(node.startswith("unit_test.") for node in spark) >= 18
    assert "test.voice_ledger.assert_no_money_column_is_a_float" in spark


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


# Each job run loads the reference data itself: the load time is the one value that differs.
RUN_SPECIFIC_COLUMNS = {("dim_reference_meta", "loaded_at")}


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
                found.setdefault(table, []).append((column, _kind(kind)))
            return found

        duck_columns, spark_columns = columns("duck"), columns("spark")
        assert len(duck_columns) == 23
        assert spark_columns == duck_columns
        differences = {}
        for table, listed in duck_columns.items():
            names = ", ".join(
                f'"{name}"' for name, _ in listed if (table, name) not in RUN_SPECIFIC_COLUMNS
            )
            only = con.execute(
                f"select count(*) from ((select {names} from duck.marts.{table} "
                f"except all select {names} from spark.marts.{table}) union all "
                f"(select {names} from spark.marts.{table} "
                f"except all select {names} from duck.marts.{table}))"
            ).fetchone()[0]
            rows = con.execute(f"select count(*) from duck.marts.{table}").fetchone()[0]
            if only:
                differences[table] = (only, rows)
        assert differences == {}
