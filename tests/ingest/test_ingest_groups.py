"""Small files validated together commit together (issue 11: ingest speed), and each file is
still wholly in or wholly out: the outcome is the one committing them one by one would have."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from ledger import ingest
from ledger.core.settings import Settings
from ledger.ingest import ingest_paths
from tests.support.events import INGEST_TIME, llm, query, write_jsonl


def _landing(folder: Path) -> list[Path]:
    """Good files around bad ones: conflicts and duplicates across files, an unreadable file,
    and a file whose content an earlier one of the same run had."""
    a = write_jsonl(
        folder / "a.jsonl", [llm("1"), llm("2", occurred_at="2026-11-02T10:00:00Z"), llm("1")]
    )
    b = folder / "b.jsonl.gz"
    b.write_text("not gzip at all\n")
    c = write_jsonl(
        folder / "c.jsonl",
        [
            llm("2", occurred_at="2026-11-02T10:00:00Z"),  # a duplicate of a's line 2
            llm("1", input_tokens=999),  # differs from a's line 1: a conflict
            "{broken",
            llm("3"),
            llm("3", input_tokens=5),  # differs from its own line 4
        ],
    )
    d = folder / "d.jsonl"
    shutil.copy(a, d)
    return [a, b, c, d]


# What the warehouse holds after an ingest, without what only says when or in which batch.
STATE = {
    "events": "select * exclude (ingested_at) from raw.events order by file_id, line_number",
    "keys": "select * exclude (batch_id) from raw.event_keys order by file_id, line_number",
    "quarantine": "select * exclude (quarantined_at) from raw.quarantine "
    "order by file_id, line_number",
    "files": "select * exclude (duration_ms, ingested_at) from raw.ingested_files order by 1",
}


def _state(settings: Settings) -> dict[str, list[tuple]]:
    return {name: query(settings, sql) for name, sql in STATE.items()}


def test_files_committed_together_end_as_if_committed_one_by_one(tmp_path: Path) -> None:
    together = Settings.from_env({"LEDGER_HOME": str(tmp_path / "together")})
    one_by_one = Settings.from_env({"LEDGER_HOME": str(tmp_path / "one-by-one")})
    files = _landing(tmp_path / "landing")

    results = ingest_paths(together, files, ingest_time=INGEST_TIME)
    for path in files:
        ingest_paths(one_by_one, [path], ingest_time=INGEST_TIME)

    assert [(r.path.name, r.status, r.accepted, r.duplicates, r.quarantined) for r in results] == [
        ("a.jsonl", "ingested", 2, 1, 0),
        ("b.jsonl.gz", "ingested", 0, 0, 1),
        ("c.jsonl", "ingested", 1, 1, 3),
        ("d.jsonl", "already_ingested", 0, 0, 0),
    ]
    assert _state(together) == _state(one_by_one)
    assert query(
        together, "select file_id, line_number, reason from raw.quarantine order by 1, 2"
    ) == [
        (2, None, "unreadable_file"),
        (3, 2, "id_conflict"),
        (3, 3, "malformed_json"),
        (3, 5, "id_conflict"),
    ]
    assert query(
        together,
        "select detail from raw.quarantine where reason = 'id_conflict' order by line_number",
    ) == [
        ("differs from the version kept from file 1 line 1",),
        ("differs from the version kept from line 4",),
    ]
    # Committed together: one Parquet file per date holds both files' events (no single file id),
    # where one by one made one per file and date.
    assert query(together, "select event_date, file_id, rows from raw.event_files order by 1") == [
        (date(2026, 11, 1), None, 2),
        (date(2026, 11, 2), 1, 1),
    ]
    assert query(one_by_one, "select count(*) from raw.event_files") == [(3,)]


def test_a_file_failing_in_a_group_leaves_the_files_before_it_in_and_nothing_of_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The landing file `b` disappears between its validation and its commit: the group rolls
    back, the files are committed one by one, `a` goes in, `b`'s error stops the run, and no
    row or Parquet file of `b` (or of `c` after it) is left."""
    from ledger.ingest.stage import Validator

    settings = Settings.from_env({"LEDGER_HOME": str(tmp_path / "home")})
    landing = tmp_path / "landing"
    a = write_jsonl(landing / "a.jsonl", [llm("a1"), llm("a2")])
    b = write_jsonl(landing / "b.jsonl", [llm("b1"), "{broken"])
    c = write_jsonl(landing / "c.jsonl", [llm("c1")])
    kept = b.read_bytes()
    validate = Validator.validate

    def validate_then_lose_b(self, paths, **kwargs):
        staged = validate(self, paths, **kwargs)
        b.unlink(missing_ok=True)
        return staged

    monkeypatch.setattr(Validator, "validate", validate_then_lose_b)
    with pytest.raises(FileNotFoundError, match="b.jsonl"):
        ingest_paths(settings, [a, b, c], ingest_time=INGEST_TIME)

    assert query(settings, "select event_id from raw.events order by 1") == [("a1",), ("a2",)]
    assert query(settings, "select path from raw.ingested_files") == [(str(a),)]
    assert query(settings, "select count(*) from raw.quarantine") == [(0,)]
    assert query(settings, "select event_id from raw.event_keys order by 1") == [("a1",), ("a2",)]
    on_disk = sorted(
        str(p.relative_to(settings.home / "raw"))
        for p in (settings.home / "raw").rglob("*")
        if p.is_file()
    )
    assert on_disk == [path for (path,) in query(settings, "select path from raw.event_files")]

    monkeypatch.setattr(Validator, "validate", validate)
    b.write_bytes(kept)
    results = ingest_paths(settings, [a, b, c], ingest_time=INGEST_TIME)
    assert [(r.path.name, r.status, r.accepted, r.quarantined) for r in results] == [
        ("a.jsonl", "already_ingested", 0, 0),
        ("b.jsonl", "ingested", 1, 1),
        ("c.jsonl", "ingested", 1, 0),
    ]
    assert query(settings, "select event_id from raw.events order by 1") == [
        ("a1",),
        ("a2",),
        ("b1",),
        ("c1",),
    ]


def test_an_ingest_held_to_a_small_memory_cap_ends_as_an_uncapped_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ingest's DuckDB connections are capped (`INGEST_MEMORY_LIMIT`) and spill into the
    home's own folder, and a cap far below what the run reads changes nothing it writes."""
    capped = Settings.from_env({"LEDGER_HOME": str(tmp_path / "capped")})
    default = Settings.from_env({"LEDGER_HOME": str(tmp_path / "default")})
    files = _landing(tmp_path / "landing")

    ingest_paths(default, files, ingest_time=INGEST_TIME)
    monkeypatch.setattr(ingest, "INGEST_MEMORY_LIMIT", "16MB")
    ingest_paths(capped, files, ingest_time=INGEST_TIME)

    assert _state(capped) == _state(default)
    assert (tmp_path / "capped" / "tmp" / "ingest-spill").is_dir()
    assert ingest.spill_folder(capped) == tmp_path / "capped" / "tmp" / "ingest-spill"
