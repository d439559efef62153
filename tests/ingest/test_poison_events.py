"""Poison events are quarantined, never fatal (issue 26, SPEC 3): a session seen under another
tenant is `session_tenant_conflict`, decided in the ingest's bulk SQL against every session kept
before (`raw.session_tenants`) and against the earlier lines of the same file and run.

(`occurred_at` before 2000-01-01 is `bad_value`: tests/ingest/test_contract.py, pydantic and the
bulk SQL on the same cases; both poisons through a real build and publish:
tests/pipeline/test_poison_build.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.core.settings import Settings
from ledger.ingest import ingest_paths
from ledger.warehouse import connect
from tests.support.events import INGEST_TIME, llm, query, write_jsonl

QUARANTINED = (
    "select file_id, line_number, reason, detail, source, event_id, raw_text "
    "from raw.quarantine order by file_id, line_number"
)


def _settings(root: Path) -> Settings:
    return Settings.from_env({"LEDGER_HOME": str(root)})


def test_an_event_whose_session_belongs_to_another_tenant_is_quarantined_and_named(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path / "home")
    first = write_jsonl(tmp_path / "a.jsonl", [llm("1")])  # s-1 belongs to acme-telecom
    ingest_paths(settings, [first], ingest_time=INGEST_TIME)
    spoof = llm("2", tenant_id="nova-retail")
    later = write_jsonl(
        tmp_path / "b.jsonl", [spoof, llm("3", tenant_id="nova-retail", session_id="s-2")]
    )

    [result] = ingest_paths(settings, [later], ingest_time=INGEST_TIME)

    assert (result.accepted, result.quarantined, result.reasons) == (
        1,
        1,
        {"session_tenant_conflict": 1},
    )
    assert query(settings, "select event_id, tenant_id from raw.events order by 1") == [
        ("1", "acme-telecom"),
        ("3", "nova-retail"),
    ]
    assert query(settings, QUARANTINED) == [
        (
            2,
            1,
            "session_tenant_conflict",
            "the session belongs to another tenant, first seen in file 1 line 1",
            "gw-1",
            "2",
            json.dumps(spoof),
        )
    ]
    assert query(
        settings,
        "select session_id, tenant_id, file_id, line_number from raw.session_tenants order by 1",
    ) == [("s-1", "acme-telecom", 1, 1), ("s-2", "nova-retail", 2, 2)]
    # The same file again changes nothing; the rightful tenant's next event still goes in.
    assert ingest_paths(settings, [later], ingest_time=INGEST_TIME)[0].status == "already_ingested"
    [more] = ingest_paths(
        settings, [write_jsonl(tmp_path / "c.jsonl", [llm("4")])], ingest_time=INGEST_TIME
    )
    assert (more.accepted, more.quarantined) == (1, 0)


def test_within_one_file_the_first_tenant_of_a_session_keeps_it(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "home")
    landing = write_jsonl(
        tmp_path / "a.jsonl",
        [
            llm("1"),
            llm("2", tenant_id="nova-retail"),
            llm("3"),
            llm("1"),  # a duplicate stays a duplicate
            llm("2", tenant_id="nova-retail", input_tokens=7),  # an id conflict first
        ],
    )

    [result] = ingest_paths(settings, [landing], ingest_time=INGEST_TIME)

    assert (result.accepted, result.duplicates, result.reasons) == (
        2,
        1,
        {"session_tenant_conflict": 1, "id_conflict": 1},
    )
    assert query(settings, "select file_id, line_number, reason, detail from raw.quarantine") == [
        (
            1,
            2,
            "session_tenant_conflict",
            "the session belongs to another tenant, first seen in line 1",
        ),
        (1, 5, "id_conflict", "differs from the version kept from line 2"),
    ]


def test_files_committed_together_decide_sessions_as_if_committed_one_by_one(
    tmp_path: Path,
) -> None:
    together, one_by_one = _settings(tmp_path / "together"), _settings(tmp_path / "one-by-one")
    files = [
        write_jsonl(tmp_path / "in" / "a.jsonl", [llm("1"), llm("2", session_id="s-2")]),
        write_jsonl(
            tmp_path / "in" / "b.jsonl",
            [
                llm("3", tenant_id="nova-retail"),
                llm("4", tenant_id="nova-retail", session_id="s-3"),
            ],
        ),
        write_jsonl(
            tmp_path / "in" / "c.jsonl",
            [llm("5", session_id="s-3"), llm("6", session_id="s-2")],
        ),
    ]

    results = ingest_paths(together, files, ingest_time=INGEST_TIME)
    for path in files:
        ingest_paths(one_by_one, [path], ingest_time=INGEST_TIME)

    assert [(r.accepted, r.quarantined) for r in results] == [(2, 0), (1, 1), (1, 1)]
    state = (
        "select file_id, line_number, reason, detail, source, event_id, raw_text "
        "from raw.quarantine order by 1, 2"
    )
    assert query(together, state) == query(one_by_one, state)
    assert query(
        together, "select file_id, line_number, detail from raw.quarantine order by 1"
    ) == [
        (2, 1, "the session belongs to another tenant, first seen in file 1 line 1"),
        (3, 1, "the session belongs to another tenant, first seen in file 2 line 2"),
    ]
    sessions = "select * from raw.session_tenants order by session_id"
    assert query(together, sessions) == query(one_by_one, sessions)


def test_a_warehouse_from_before_the_session_table_fills_it_once_from_its_events(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path / "home")
    ingest_paths(
        settings,
        [write_jsonl(tmp_path / "a.jsonl", [llm("1"), llm("2", session_id="s-2")])],
        ingest_time=INGEST_TIME,
    )
    with connect(settings.warehouse_path) as con:
        con.execute("drop table raw.session_tenants")

    [result] = ingest_paths(
        settings,
        [write_jsonl(tmp_path / "b.jsonl", [llm("3", tenant_id="nova-retail", session_id="s-2")])],
        ingest_time=INGEST_TIME,
    )

    assert result.reasons == {"session_tenant_conflict": 1}
    assert query(settings, "select detail from raw.quarantine") == [
        ("the session belongs to another tenant, first seen in file 1 line 2",)
    ]
    assert query(
        settings,
        "select session_id, tenant_id, file_id, line_number from raw.session_tenants order by 1",
    ) == [("s-1", "acme-telecom", 1, 1), ("s-2", "acme-telecom", 1, 2)]


def test_a_large_file_committed_in_pieces_decides_sessions_as_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ledger.ingest.files as files

    # Sessions s-0..s-3, each first under acme-telecom; every fifth line claims one for nova-retail.
    lines = [
        llm(
            str(n),
            session_id=f"s-{n % 4}",
            tenant_id="nova-retail" if n % 5 == 4 else "acme-telecom",
        )
        for n in range(40)
    ]
    whole, pieces = _settings(tmp_path / "whole"), _settings(tmp_path / "pieces")
    [expected] = ingest_paths(
        whole, [write_jsonl(tmp_path / "a.jsonl", lines)], ingest_time=INGEST_TIME
    )
    monkeypatch.setattr(files, "CHUNKED_ABOVE_BYTES", 100)
    monkeypatch.setattr(files, "CHUNK_BYTES", 1500)  # about 5 lines a piece

    [result] = ingest_paths(
        pieces, [write_jsonl(tmp_path / "b.jsonl", lines)], ingest_time=INGEST_TIME
    )

    assert expected.reasons == result.reasons == {"session_tenant_conflict": 8}
    state = "select line_number, reason, detail, event_id from raw.quarantine order by 1"
    assert query(pieces, state) == query(whole, state)
    assert query(whole, state)[:2] == [
        (
            5,
            "session_tenant_conflict",
            "the session belongs to another tenant, first seen in line 1",
            "4",
        ),
        (
            10,
            "session_tenant_conflict",
            "the session belongs to another tenant, first seen in line 2",
            "9",
        ),
    ]


def _session_event(event_id: str, event_type: str, at: str, session_id: str = "s-1", **fields):
    event = llm(event_id, session_id=session_id, occurred_at=at, **fields)
    for name in ("provider", "model", "turn_index", "input_tokens", "cached_input_tokens"):
        event.pop(name)
    event.pop("output_tokens")
    return {**event, "event_type": event_type}


def _started(event_id: str, at: str, session_id: str = "s-1") -> dict:
    return _session_event(
        event_id, "session.started", at, session_id, scenario="customer_service",
        channel="sip", pipeline="cascade",
    )  # fmt: skip


def _ended(event_id: str, at: str, session_id: str = "s-1") -> dict:
    return _session_event(event_id, "session.ended", at, session_id, end_reason="user_hangup")


def test_a_session_ended_before_its_start_is_clock_skew_in_one_file_or_after_it(
    tmp_path: Path,
) -> None:
    # SPEC 3: s-1 starts at 10:00 and "ends" at 09:55 (-300 s) in one file; s-2 starts at 10:00
    # in one ingest and ends at 09:59 in the next; s-3 ends at 10:02, after its 10:00 start.
    settings = _settings(tmp_path / "home")
    first = write_jsonl(
        tmp_path / "a.jsonl",
        [
            _started("1", "2026-11-01T10:00:00Z"),
            _ended("2", "2026-11-01T09:55:00Z"),
            _started("3", "2026-11-01T10:00:00Z", "s-2"),
            _started("4", "2026-11-01T10:00:00Z", "s-3"),
        ],
    )
    [one] = ingest_paths(settings, [first], ingest_time=INGEST_TIME)
    later = write_jsonl(
        tmp_path / "b.jsonl",
        [_ended("5", "2026-11-01T09:59:00Z", "s-2"), _ended("6", "2026-11-01T10:02:00Z", "s-3")],
    )

    [two] = ingest_paths(settings, [later], ingest_time=INGEST_TIME)

    assert (one.accepted, one.reasons) == (3, {"clock_skew": 1})
    assert (two.accepted, two.reasons) == (1, {"clock_skew": 1})
    assert query(
        settings, "select file_id, line_number, reason, detail, event_id from raw.quarantine "
        "order by file_id, line_number",
    ) == [
        (1, 2, "clock_skew", "occurred_at", "2"),
        (2, 1, "clock_skew", "occurred_at", "5"),
    ]  # fmt: skip
    assert query(settings, "select event_id from raw.events order by 1") == [
        ("1",), ("3",), ("4",), ("6",),
    ]  # fmt: skip
