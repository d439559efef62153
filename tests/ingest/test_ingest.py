"""Ingest: quarantine with reasons, permanent deduplication, replay and atomicity per file."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from ledger.core.settings import Settings
from ledger.ingest import ingest_paths
from ledger.ingest.load import load_file
from ledger.warehouse import connect, ensure_raw_schema
from tests.support.events import INGEST_TIME, llm, query, write_jsonl


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env({"LEDGER_HOME": str(tmp_path / "home")})


def ingest(settings: Settings, *paths: Path):
    return ingest_paths(settings, list(paths), ingest_time=INGEST_TIME)


def test_each_bad_line_is_quarantined_with_reason_file_line_and_raw_text(
    settings: Settings, tmp_path: Path
) -> None:
    bad_lines = [
        "{oops",
        json.dumps({k: v for k, v in llm("m").items() if k != "model"}),
        json.dumps(llm("u", transcript="my card number is")),
        json.dumps(llm("t", input_tokens="100")),
        json.dumps(llm("v", input_tokens=-5)),
        json.dumps(llm("f", occurred_at="2026-12-01T00:00:00Z")),
    ]
    path = write_jsonl(tmp_path / "in" / "mixed.jsonl", [llm("ok-1"), *bad_lines, llm("ok-2")])

    [result] = ingest(settings, path)

    assert (result.rows, result.accepted, result.duplicates, result.quarantined) == (8, 2, 0, 6)
    assert query(
        settings,
        "select source_file, line_number, reason, detail, raw_text from raw.quarantine "
        "order by line_number",
    ) == [
        (str(path), 2, "malformed_json", None, bad_lines[0]),
        (str(path), 3, "missing_field", "model", bad_lines[1]),
        (str(path), 4, "unknown_field", "transcript", bad_lines[2]),
        (str(path), 5, "bad_type", "input_tokens", bad_lines[3]),
        (str(path), 6, "bad_value", "input_tokens", bad_lines[4]),
        (str(path), 7, "future_timestamp", "occurred_at", bad_lines[5]),
    ]
    assert query(settings, "select event_id, line_number from raw.events order by 1") == [
        ("ok-1", 1),
        ("ok-2", 8),
    ]


def test_replaying_a_file_changes_nothing(settings: Settings, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [llm("1"), llm("2"), "{bad"])
    ingest(settings, path)
    before = (
        query(settings, "select count(*) from raw.events"),
        query(settings, "select count(*) from raw.quarantine"),
    )

    [again] = ingest(settings, path)
    copy = write_jsonl(tmp_path / "copy-of-a.jsonl", [llm("1"), llm("2"), "{bad"])
    [copied] = ingest(settings, copy)

    assert again.status == copied.status == "already_ingested"
    after = (
        query(settings, "select count(*) from raw.events"),
        query(settings, "select count(*) from raw.quarantine"),
    )
    assert before == after == ([(2,)], [(1,)])
    assert query(settings, "select count(*) from raw.ingested_files") == [(1,)]


def test_deduplication_is_permanent_across_files_and_runs(
    settings: Settings, tmp_path: Path
) -> None:
    ingest(settings, write_jsonl(tmp_path / "day1.jsonl", [llm("1"), llm("2")]))
    # Weeks later, a gateway re-sends event 1 (identical) along with a new event 3.
    [result] = ingest(
        settings, write_jsonl(tmp_path / "day9.jsonl", [llm("1"), llm("3"), llm("3")])
    )

    assert (result.accepted, result.duplicates, result.quarantined) == (1, 2, 0)
    assert query(settings, "select event_id from raw.events order by 1") == [("1",), ("2",), ("3",)]


def test_same_event_id_from_two_sources_is_kept_twice(settings: Settings, tmp_path: Path) -> None:
    [result] = ingest(
        settings, write_jsonl(tmp_path / "a.jsonl", [llm("42", "gw-1"), llm("42", "gw-2")])
    )
    assert result.accepted == 2
    assert query(settings, "select source, event_id from raw.events order by 1") == [
        ("gw-1", "42"),
        ("gw-2", "42"),
    ]


def test_same_key_with_a_different_payload_is_an_id_conflict_and_the_first_stays(
    settings: Settings, tmp_path: Path
) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [llm("7", input_tokens=100)])
    ingest(settings, first)
    # Key order and offset spelling differ but the payload is the same: a duplicate, not a conflict.
    same = llm("7", input_tokens=100, occurred_at="2026-11-01T18:00:00+08:00")
    same_reordered = dict(reversed(list(same.items())))
    later = write_jsonl(
        tmp_path / "b.jsonl",
        [llm("7", input_tokens=999), same_reordered, llm("8"), llm("8", input_tokens=5)],
    )
    [result] = ingest(settings, later)

    assert (result.accepted, result.duplicates, result.quarantined) == (1, 1, 2)
    assert query(settings, "select event_id, input_tokens from raw.events order by 1") == [
        ("7", 100),
        ("8", 100),
    ]
    assert query(
        settings, "select line_number, reason, detail from raw.quarantine order by line_number"
    ) == [
        (1, "id_conflict", "differs from the version kept from file 1 line 1"),
        (4, "id_conflict", "differs from the version kept from line 3"),
    ]
    # A conflicting line is valid, so validation kept no text for it: the commit reads it again.
    lines = later.read_text().splitlines()
    assert query(
        settings,
        "select line_number, raw_text, source, event_id from raw.quarantine order by line_number",
    ) == [(1, lines[0], "gw-1", "7"), (4, lines[3], "gw-1", "8")]


def test_a_file_rewritten_between_validation_and_commit_goes_in_later_as_it_is_then(
    settings: Settings, tmp_path: Path
) -> None:
    from ledger.ingest.load import commit_staged
    from ledger.ingest.stage import Validator

    ingest(settings, write_jsonl(tmp_path / "a.jsonl", [llm("7")]))
    later = write_jsonl(tmp_path / "b.jsonl", [llm("7", input_tokens=999)])
    with Validator() as validator:
        [staged] = validator.validate([later], ingest_time=INGEST_TIME)
    # The conflicting line's text would be read again from a file that is no longer the one
    # validated: the commit stops and leaves nothing of it.
    write_jsonl(later, [llm("8")])
    with connect(settings.warehouse_path) as con:
        with pytest.raises(RuntimeError, match="changed while it was being ingested"):
            commit_staged(con, staged)
    assert query(settings, "select count(*) from raw.quarantine") == [(0,)]
    assert query(settings, "select count(*) from raw.ingested_files") == [(1,)]

    [result] = ingest(settings, later)

    assert (result.accepted, result.quarantined) == (1, 0)


class _FailBeforeCommit:
    """A connection that breaks after the events are inserted, before the file is committed."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con

    def execute(self, sql: str, *args: object):
        if sql.strip().startswith("insert into raw.quarantine"):
            raise RuntimeError("disk full")
        return self._con.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._con, name)


def test_a_failure_in_the_middle_of_a_file_leaves_nothing_of_it_visible(
    settings: Settings, tmp_path: Path
) -> None:
    ingest(settings, write_jsonl(tmp_path / "good.jsonl", [llm("1")]))
    broken = write_jsonl(tmp_path / "broken.jsonl", [llm("2"), llm("3"), "{bad"])
    with connect(settings.warehouse_path) as con:
        with pytest.raises(RuntimeError, match="disk full"):
            load_file(_FailBeforeCommit(con), broken, ingest_time=INGEST_TIME)  # type: ignore[arg-type]

    assert query(settings, "select event_id from raw.events") == [("1",)]
    assert query(settings, "select count(*) from raw.quarantine") == [(0,)]
    assert query(settings, "select count(*) from raw.ingested_files") == [(1,)]
    # ...and the same file goes in whole on the next attempt.
    [retry] = ingest(settings, broken)
    assert (retry.accepted, retry.quarantined) == (2, 1)


def test_a_killed_ingest_leaves_the_previous_state_readable(
    settings: Settings, tmp_path: Path
) -> None:
    ingest(settings, write_jsonl(tmp_path / "good.jsonl", [llm("1")]))
    big = write_jsonl(tmp_path / "big.jsonl", [llm(str(i)) for i in range(2, 5002)])
    # The child process dies (no cleanup, no rollback) after inserting the events.
    script = f"""
import os
from ledger.ingest.load import load_file
from ledger.warehouse import connect
from pathlib import Path
class Die:
    def __init__(self, con): self.con = con
    def execute(self, sql, *a):
        if sql.strip().startswith("insert into raw.quarantine"):
            os._exit(9)
        return self.con.execute(sql, *a)
    def __getattr__(self, name): return getattr(self.con, name)
load_file(Die(connect({str(settings.warehouse_path)!r})), Path({str(big)!r}))
"""
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert child.returncode == 9, child.stderr

    assert query(settings, "select event_id from raw.events") == [("1",)]
    assert query(settings, "select count(*) from raw.ingested_files") == [(1,)]
    # The child had written big.jsonl's events as Parquet: a file the manifest does not list does
    # not exist for raw.events, and the next ingest deletes it before it commits big.jsonl again.
    parquet = lambda: sorted((settings.home / "raw" / "events").rglob("*.parquet"))  # noqa: E731
    [kept] = query(settings, "select path from raw.event_files")
    assert len(parquet()) == 2 and str(settings.home / "raw" / kept[0]) in map(str, parquet())
    [again] = ingest(settings, big)
    assert again.accepted == 5000
    assert query(settings, "select count(*) from raw.events") == [(5001,)]
    assert len(parquet()) == 2 == query(settings, "select count(*) from raw.event_files")[0][0]


def test_gzip_and_parquet_files_ingest_like_jsonl(settings: Settings, tmp_path: Path) -> None:
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress((json.dumps(llm("g1")) + "\n{bad\n").encode()))
    rows = [llm("p1"), llm("p2", input_tokens=-1)]
    parquet = tmp_path / "b.parquet"
    pl.DataFrame(rows).write_parquet(parquet)

    results = ingest(settings, gz, parquet)

    assert [(r.accepted, r.quarantined) for r in results] == [(1, 1), (1, 1)]
    assert query(
        settings, "select reason, line_number from raw.quarantine order by source_file"
    ) == [
        ("malformed_json", 2),
        ("bad_value", 2),
    ]


def test_a_folder_is_ingested_in_path_order_skipping_hidden_temporary_files(
    settings: Settings, tmp_path: Path
) -> None:
    write_jsonl(tmp_path / "land" / "2026-11-02" / "gw.jsonl", [llm("b")])
    write_jsonl(tmp_path / "land" / "2026-11-01" / "gw.jsonl", [llm("a")])
    write_jsonl(tmp_path / "land" / "2026-11-01" / ".gw.jsonl.tmp", [llm("partial")])
    (tmp_path / "land" / "notes.txt").write_text("not an event file")

    results = ingest(settings, tmp_path / "land")

    assert [r.path.parent.name for r in results] == ["2026-11-01", "2026-11-02"]
    assert query(settings, "select event_id from raw.events order by file_id") == [("a",), ("b",)]
    # Every raw Parquet file types file_id as raw.events does (Spark reads them with one schema).
    widths = query(
        settings,
        "select distinct type from parquet_schema("
        f"'{settings.home / 'raw'}/**/*.parquet') where name = 'file_id'",
    )
    assert widths == [("INT64",)]


def test_raw_tables_are_created_once_and_survive_a_second_call(settings: Settings) -> None:
    with connect(settings.warehouse_path) as con:
        ensure_raw_schema(con)
        ensure_raw_schema(con)
        tables = con.execute(
            "select table_name, table_type from information_schema.tables "
            "where table_schema = 'raw' order by 1"
        ).fetchall()
    # raw.events is a view over the Parquet files the manifest raw.event_files lists.
    assert tables == [
        ("event_files", "BASE TABLE"),
        ("event_keys", "BASE TABLE"),
        ("events", "VIEW"),
        ("ingested_files", "BASE TABLE"),
        ("quarantine", "BASE TABLE"),
        ("session_tenants", "BASE TABLE"),
    ]


def test_a_degradation_keeps_its_reason_and_a_changed_reason_is_a_conflict(
    settings: Settings, tmp_path: Path
) -> None:
    degraded = {
        "event_id": "d-1",
        "source": "gw-1",
        "event_type": "session.degraded",
        "occurred_at": "2026-11-01T10:00:00Z",
        "tenant_id": "acme-telecom",
        "session_id": "s-1",
        "kind": "tts_filler",
        "reason": "tts_timeout",
    }
    ingest(settings, write_jsonl(tmp_path / "a.jsonl", [degraded]))
    [later] = ingest(
        settings, write_jsonl(tmp_path / "b.jsonl", [{**degraded, "reason": "tts_5xx"}])
    )

    assert query(settings, "select kind, reason from raw.events") == [("tts_filler", "tts_timeout")]
    assert (later.accepted, later.quarantined, later.reasons) == (0, 1, {"id_conflict": 1})


def test_an_unreadable_file_in_a_batch_does_not_take_the_others_with_it(
    settings: Settings, tmp_path: Path
) -> None:
    # The three files are validated as one batch; the broken one is quarantined whole (issue 13;
    # tests/test_ingest_hardening.py) and the files on either side of it go in.
    write_jsonl(tmp_path / "in" / "a.jsonl", [llm("1")])
    (tmp_path / "in" / "b.jsonl.gz").write_bytes(b"not gzip at all")
    write_jsonl(tmp_path / "in" / "c.jsonl", [llm("3")])

    ingest(settings, tmp_path / "in")

    assert query(settings, "select event_id from raw.events order by 1") == [("1",), ("3",)]
    assert query(settings, "select path, quarantined from raw.ingested_files order by 1") == [
        (str(tmp_path / "in" / "a.jsonl"), 0),
        (str(tmp_path / "in" / "b.jsonl.gz"), 1),
        (str(tmp_path / "in" / "c.jsonl"), 0),
    ]


def test_a_warehouse_whose_raw_events_is_a_table_migrates_without_losing_an_event(
    settings: Settings, tmp_path: Path
) -> None:
    first = write_jsonl(tmp_path / "first.jsonl", [llm("1"), llm("2", source="gw-2"), "{bad"])
    ingest(settings, first)
    before = query(settings, "select * exclude (key_hash) from raw.events order by event_id")
    # Turn it into a warehouse as it was before the Parquet layer (and before key_hash): events
    # in a table, no Parquet manifest, no keys table, no Parquet files.
    with connect(settings.warehouse_path) as con:
        con.execute("create table raw.old_events as select * exclude (key_hash) from raw.events")
        con.execute("drop view raw.events")
        con.execute("alter table raw.old_events rename to events")
        con.execute("drop table raw.event_files")
        con.execute("drop table raw.event_keys")
    for path in sorted((settings.home / "raw").rglob("*.parquet")):
        path.unlink()

    [result] = ingest(settings, write_jsonl(tmp_path / "again.jsonl", [llm("1"), llm("3")]))

    assert (result.accepted, result.duplicates) == (1, 1)
    assert query(
        settings,
        "select table_type from information_schema.tables where table_name = 'events'",
    ) == [("VIEW",)]
    after = query(settings, "select * exclude (key_hash) from raw.events order by event_id")
    assert after[:2] == before and [row[1] for row in after] == ["1", "2", "3"]
    assert query(
        settings,
        "select event_id, key_hash = hash(source, event_id) from raw.events order by event_id",
    ) == [("1", True), ("2", True), ("3", True)]
    assert query(
        settings, "select batch_id, file_id, rows from raw.event_files order by 2 nulls first"
    ) == [
        ("migrated", None, 2),
        (query(settings, "select batch_id from raw.event_keys where event_id = '3'")[0][0], 2, 1),
    ]
    assert query(settings, "select count(*) from raw.quarantine") == [(1,)]


def test_files_are_validated_in_batches_bounded_by_size_and_count(tmp_path: Path) -> None:
    from ledger.ingest import batches

    sizes = [40, 40, 40, 200, 10, 10, 10, 10]
    files = [tmp_path / f"{index}.jsonl" for index in range(len(sizes))]
    for path, size in zip(files, sizes, strict=True):
        path.write_bytes(b"x" * size)

    runs = [[int(path.stem) for path in batch] for batch in batches(files, budget=100, most=3)]

    assert runs == [[0, 1], [2], [3], [4, 5, 6], [7]]


def test_a_line_that_is_not_utf8_is_quarantined_and_the_rest_of_the_file_goes_in(
    settings: Settings, tmp_path: Path
) -> None:
    spoilt = json.dumps(llm("2", model="XX")).encode().replace(b"XX", b"\xff\xfe")
    # the last line conflicts with the first: its text is read again, decoded the same way
    conflict = json.dumps(llm("1", input_tokens=5)).encode()
    lines = [json.dumps(llm("1")).encode(), spoilt, json.dumps(llm("3")).encode(), conflict]
    path = tmp_path / "in" / "mixed.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"\r\n".join(lines) + b"\r\n")

    [result] = ingest(settings, path)

    assert (result.rows, result.accepted, result.quarantined) == (4, 2, 2)
    [(line_number, reason, raw_text), conflicting] = query(
        settings,
        "select line_number, reason, raw_text from raw.quarantine order by line_number",
    )
    assert (line_number, reason) == (2, "malformed_json")
    # the undecodable bytes are kept, spelt out
    assert raw_text == spoilt.decode("utf-8", errors="backslashreplace")
    assert '"model": "\\xff\\xfe"' in raw_text
    assert conflicting == (4, "id_conflict", conflict.decode())
    assert query(settings, "select event_id, line_number from raw.events order by 1") == [
        ("1", 1),
        ("3", 3),
    ]


def test_a_line_longer_than_the_line_limit_is_quarantined_by_itself(
    settings: Settings, tmp_path: Path
) -> None:
    # Over LEDGER_MAX_LINE_BYTES (DuckDB's text reader stops there too): tests/ingest/test_long_lines.py
    huge = llm("2", route="r" * 3_000_000)
    text = "\n".join(json.dumps(row) for row in [llm("1"), huge]) + "\n"
    path = tmp_path / "huge.jsonl.gz"
    path.write_bytes(gzip.compress(text.encode()))

    [result] = ingest(settings, path)

    assert (result.rows, result.accepted, result.quarantined) == (2, 1, 1)
    assert query(settings, "select line_number, reason, detail from raw.quarantine") == [
        (2, "line_too_long", "3,000,299 bytes, over the line limit of 2,000,000 bytes")
    ]
