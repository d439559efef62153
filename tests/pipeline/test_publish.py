"""Incremental publishing (issue 11 item 4, issue 13 point 9): the published file is views over
Parquet parts; unchanged parts are reused, a reader holding the old file keeps reading it, and a
publish killed half-way leaves nothing behind once the next one starts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb
import pytest

from ledger.core.settings import Settings
from ledger.pipeline.publish import publish, published_parts, remove_publish_leftovers
from ledger.pipeline.published_parts import OPS_TABLES, PARTS_DIR, SESSION_ORDERED
from ledger.pipeline.spark import marts_selects, tables_dir
from ledger.serving.published_copy import open_published
from ledger.warehouse import connect, copy_warehouse
from tests.support.homes import LedgerWarehouse

pytestmark = pytest.mark.integration

LEDGER = "fct_session_ledger"


@pytest.fixture
def home(ledger_built_warehouse: LedgerWarehouse, tmp_path: Path) -> Settings:
    """A copy of the built warehouse with nothing published yet."""
    source = ledger_built_warehouse.settings
    settings = source.model_copy(update={"home": tmp_path / "home"})
    copy_warehouse(source.warehouse_path, settings.warehouse_path)
    return settings


def _weeks(settings: Settings, table: str) -> list[str]:
    with connect(settings.warehouse_path, read_only=True) as con:
        return [
            week
            for (week,) in con.execute(
                f"select distinct strftime(business_date, '%G-W%V') from marts.{table} order by 1"
            ).fetchall()
        ]


def _rows(settings: Settings, tables: frozenset[str]) -> dict[str, int]:
    with connect(settings.warehouse_path, read_only=True) as con:
        return {t: con.execute(f"select count(*) from marts.{t}").fetchone()[0] for t in tables}


def _published_totals(con: duckdb.DuckDBPyConnection) -> tuple[int, object]:
    return con.execute(f"select count(*), sum(total_cost) from marts.{LEDGER}").fetchone()


def _files_on_disk(settings: Settings) -> set[str]:
    folder = settings.published_path.parent
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def _referenced(settings: Settings) -> set[str]:
    folder = settings.published_path.parent
    return {
        str(Path(f).relative_to(folder.resolve()))
        for part in published_parts(settings.published_path)
        for f in part.files
    }


def test_the_published_views_equal_the_marts_row_for_row_with_their_types(home: Settings):
    publish(home, whole_below=0)
    with duckdb.connect() as con:
        con.execute(f"attach '{home.warehouse_path}' as w (read_only)")
        con.execute(f"attach '{home.published_path}' as p (read_only)")
        tables = [
            t
            for (t,) in con.execute(
                "select table_name from duckdb_tables() where database_name = 'w' "
                "and schema_name = 'marts' order by 1"
            ).fetchall()
        ]
        # The alerts' and reviews' records published beside the marts are not dbt's.
        views = [
            v
            for (v,) in con.execute(
                "select view_name from duckdb_views() where database_name = 'p' "
                "and schema_name = 'marts' order by 1"
            ).fetchall()
            if v not in OPS_TABLES
        ]
        assert views == tables
        for table in tables:
            for a, b in (("w", "p"), ("p", "w")):
                (extra,) = con.execute(
                    f"select count(*) from (select * from {a}.marts.{table} "
                    f"except all select * from {b}.marts.{table})"
                ).fetchone()
                assert extra == 0, (table, a)
            declared = con.execute(
                "select column_name, data_type from duckdb_columns() where database_name = 'w' "
                "and schema_name = 'marts' and table_name = ? order by column_index",
                [table],
            ).fetchall()
            read = [(c[0], c[1]) for c in con.execute(f"describe p.marts.{table}").fetchall()]
            assert read == declared, table
    # The marts the session explorer looks up by session id are written in session order within
    # each part (so Parquet's statistics skip the row groups that cannot hold a session).
    found: dict[str, tuple[int, int]] = {}
    for part in published_parts(home.published_path):
        if part.table_name in SESSION_ORDERED:
            with duckdb.connect() as con:
                [(rows, descents)] = con.execute(
                    "select count(*), count(*) filter (where session_id < before) from ("
                    "select session_id, lag(session_id) over (partition by filename "
                    "order by file_row_number) as before "
                    "from read_parquet(?, filename = true, file_row_number = true))",
                    [list(part.files)],
                ).fetchall()
            total, out_of_order = found.get(part.table_name, (0, 0))
            found[part.table_name] = (total + rows, out_of_order + descents)
    expected = {t: (rows, 0) for t, rows in _rows(home, SESSION_ORDERED).items() if rows}
    assert "fct_usage_lines" in expected
    assert found == expected


def test_unchanged_parts_are_reused_and_only_the_changed_week_is_written(home: Settings):
    weeks = _weeks(home, LEDGER)
    assert len(weeks) == 2  # the simulated days fall in two ISO weeks: the test needs both

    first = publish(home, whole_below=0)
    parts = published_parts(home.published_path)
    assert first.parts_written == len(parts) and first.parts_reused == 0
    assert sorted(p.part for p in parts if p.table_name == LEDGER) == weeks

    again = publish(home, whole_below=0)
    assert (again.parts_written, again.parts_reused) == (0, len(parts))
    assert published_parts(home.published_path) == parts

    # One week of one mart changes (one session's cost): that part alone is written again.
    with connect(home.warehouse_path) as con:
        (changed_session,) = con.execute(
            f"select min(session_id) from marts.{LEDGER} "
            "where strftime(business_date, '%G-W%V') = ?",
            [weeks[1]],
        ).fetchone()
        con.execute(
            f"update marts.{LEDGER} set total_cost = total_cost + 1 where session_id = ?",
            [changed_session],
        )
    changed = publish(home, whole_below=0)
    assert (changed.parts_written, changed.parts_reused) == (1, len(parts) - 1)
    after = published_parts(home.published_path)
    differs = [(b.table_name, b.part) for a, b in zip(parts, after, strict=True) if a != b]
    assert differs == [(LEDGER, weeks[1])]
    with open_published(home) as con:
        (cost,) = con.execute(
            f"select total_cost from marts.{LEDGER} where session_id = ?", [changed_session]
        ).fetchone()
    with connect(home.warehouse_path, read_only=True) as con:
        assert con.execute(
            f"select total_cost from marts.{LEDGER} where session_id = ?", [changed_session]
        ).fetchone() == (cost,)


def test_a_reader_holding_the_old_file_keeps_reading_it_while_new_ones_are_published(
    home: Settings,
):
    publish(home, whole_below=0)
    # A reader as the boards open it: a private DuckDB with the file attached, kept open.
    reader = duckdb.connect()
    reader.execute(f"attach '{home.published_path}' as published (read_only)")
    reader.execute("use published")
    before = _published_totals(reader)
    old_parts = published_parts(home.published_path)

    with connect(home.warehouse_path) as con:
        con.execute(f"delete from marts.{LEDGER} where business_date = ?", [date(2026, 11, 15)])
        (sessions_left,) = con.execute(f"select count(*) from marts.{LEDGER}").fetchone()
    assert 0 < sessions_left < before[0]

    publish(home, whole_below=0)
    # The old reader still sees the whole old generation; a new reader sees the new one.
    assert _published_totals(reader) == before
    with open_published(home) as con:
        assert _published_totals(con)[0] == sessions_left
    # Its parts are kept while it is the previous generation ...
    assert all(Path(f).exists() for p in old_parts for f in p.files)

    publish(home, whole_below=0)
    reader.close()
    # ... and the parts only it named go once a newer publish replaced its successor.
    current = {f for p in published_parts(home.published_path) for f in p.files}
    gone = {f for p in old_parts for f in p.files} - current
    assert gone and not any(Path(f).exists() for f in gone)
    assert _files_on_disk(home) == {"boards.duckdb", ".publish.lock"} | _referenced(home)


_KILLED_PUBLISH = """
import os, signal, sys
import ledger.pipeline.publish as publish_module
from ledger.core.settings import Settings
settings = Settings.from_env({"LEDGER_HOME": sys.argv[1], "LEDGER_REFERENCE_DIR": sys.argv[2]})
renames = []
real_replace = os.replace
def replace(source, target):
    renames.append(target)
    if len(renames) == 2:  # one part is in place, the rest still in the staging folder
        os.kill(os.getpid(), signal.SIGKILL)
    real_replace(source, target)
publish_module.os.replace = replace
publish_module.publish(settings, whole_below=0)
"""


@pytest.mark.parametrize("cleaned_by", ["the next publish", "the next build's start"])
def test_a_publish_killed_half_way_leaves_the_old_copy_and_its_leftovers_are_cleaned(
    home: Settings, cleaned_by: str
):
    publish(home, whole_below=0)
    published_before = home.published_path.read_bytes()
    first_generation = _referenced(home)
    with connect(home.warehouse_path) as con:  # something to publish: every part changes
        con.execute(f"update marts.{LEDGER} set total_cost = total_cost + 1")

    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_PUBLISH, str(home.home), str(home.reference_dir)],
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -9, killed.stderr
    assert home.published_path.read_bytes() == published_before
    left = _files_on_disk(home) - {"boards.duckdb", ".publish.lock"} - _referenced(home)
    temporary = {f for f in left if f.startswith(".boards.duckdb.")}  # the file (and its log)
    staging = {f for f in left if f.startswith(f"{PARTS_DIR}/.staging-")}
    assert [f for f in temporary if f.endswith(".tmp")] and staging
    moved = left - temporary - staging  # the one part already in place, named by no file
    assert len(moved) == 1

    if cleaned_by == "the next build's start":
        # `run_build` calls it before the job; parts are left to the publish (it alone knows
        # the previous generation's).
        removed = remove_publish_leftovers(home)
        folder = home.published_path.parent
        staging_folders = {str(Path(*Path(f).parts[:2])) for f in staging}
        assert {str(p.relative_to(folder)) for p in removed} == temporary | staging_folders
        assert (
            _files_on_disk(home) - {"boards.duckdb", ".publish.lock"} - _referenced(home) == moved
        )
        result = publish(home, whole_below=0)
        assert result.leftovers_removed == 0
    else:
        result = publish(home, whole_below=0)
        assert result.leftovers_removed == len(temporary) + 1  # and the staging folder
    # What stays: the new file, its parts and the previous generation's (a reader may hold it).
    assert (
        _files_on_disk(home)
        == {"boards.duckdb", ".publish.lock"} | _referenced(home) | first_generation
    )
    with open_published(home) as con, connect(home.warehouse_path, read_only=True) as wh:
        assert _published_totals(con) == _published_totals(wh)


def test_a_spark_mart_without_a_file_is_published_empty_with_the_duckdb_marts_columns(
    ledger_built_warehouse: LedgerWarehouse, tmp_path: Path
) -> None:
    built = ledger_built_warehouse.settings
    settings = built.model_copy(update={"home": tmp_path / "home", "engine": "spark"})
    # Spark leaves only a folder for a week-partitioned table without a row (no turns at all).
    folder = tables_dir(settings) / "marts" / "fct_turn_latency"
    folder.mkdir(parents=True)
    (folder / "_SUCCESS").touch()
    with duckdb.connect() as con, pytest.raises(RuntimeError, match="give the model an enforced"):
        marts_selects(con, settings)

    settings.dbt_target_dir.mkdir(parents=True)
    shutil.copy(built.dbt_target_dir / "manifest.json", settings.dbt_target_dir)
    with duckdb.connect() as con:
        [(name, select)] = marts_selects(con, settings).items()
        columns = con.execute(f"describe {select}").fetchall()
        assert con.execute(f"select count(*) from ({select})").fetchall() == [(0,)]
    with connect(built.warehouse_path, read_only=True) as warehouse:
        expected = warehouse.execute("describe marts.fct_turn_latency").fetchall()
    assert name == "marts.fct_turn_latency"
    assert [column[:2] for column in columns] == [column[:2] for column in expected]
    assert len(columns) == 28
