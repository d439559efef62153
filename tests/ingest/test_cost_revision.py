"""`cost.reported`'s `revision` (SPEC 9) in the raw layer: a field newer than some event files.

Event files written before the contract gained `revision` have no such column: the next ingest
rewrites each of them once with the column NULL (a field of a newer contract is NULL on every older
event), so every reader (raw.events, an incremental build, Spark) reads all files alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from ledger.core.settings import REPO_ROOT, Settings
from ledger.ingest import ingest_paths
from ledger.warehouse import complete_event_files, connect, raw_root


def _cost(event_id: str, amount: str, revision: int | None) -> dict:
    event = {
        "event_id": event_id,
        "source": "retell",
        "event_type": "cost.reported",
        "occurred_at": "2026-11-20T03:01:00Z",
        "tenant_id": "bright-bank",
        "session_id": "rev-1",
        "provider": "openai",
        "component": "llm",
        "amount": amount,
        "currency": "USD",
        "item": "gpt_4o_mini",
    }
    return event if revision is None else {**event, "revision": revision}


def _write(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_event_files_older_than_the_revision_field_read_it_as_null(tmp_path):
    settings = Settings(home=tmp_path / "home", reference_dir=REPO_ROOT / "data" / "reference")
    [first] = ingest_paths(settings, [_write(tmp_path / "a.jsonl", [_cost("c-0", "0.005", None)])])
    assert first.accepted == 1
    # Make the warehouse's only event file one written before `revision` existed (and the
    # warehouse one that never recorded its files complete).
    with connect(settings.warehouse_path) as con:
        [(relative,)] = con.execute("select path from raw.event_files").fetchall()
        path = raw_root(con) / relative
        con.execute("comment on table raw.event_files is null")
    with duckdb.connect() as con:
        con.execute(
            f"copy (select * exclude (revision) from read_parquet('{path}')) to '{path}.old' "
            "(format parquet)"
        )
    Path(f"{path}.old").replace(path)

    with connect(settings.warehouse_path) as con:
        assert complete_event_files(con) == [path]
        assert complete_event_files(con) == []  # recorded: done once
        assert con.execute("select event_id, revision from raw.events").fetchall() == [
            ("c-0", None)
        ]
    with duckdb.connect() as con:
        names = [n for (n,) in con.execute(f"select name from parquet_schema('{path}')").fetchall()]
    assert "revision" in names and not list(path.parent.glob(".*"))

    [later] = ingest_paths(settings, [_write(tmp_path / "b.jsonl", [_cost("c-1", "0.0062", 1)])])
    assert (later.accepted, later.quarantined) == (1, 0)
    with connect(settings.warehouse_path) as con:
        rows = con.execute(
            "select event_id, revision, amount from raw.events order by event_id"
        ).fetchall()
    assert [(e, r, str(a)) for e, r, a in rows] == [
        ("c-0", None, "0.005000"),
        ("c-1", 1, "0.006200"),
    ]
