"""Lines too long (issue 39): a line over the line limit is quarantined by itself as
`line_too_long`, the rest of its file and every other file of its batch go in, and memory never
holds the line whole."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from ledger.core.settings import REPO_ROOT, Settings
from ledger.ingest import ingest_paths
from tests.support.events import INGEST_TIME, llm, query, write_jsonl


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env({"LEDGER_HOME": str(tmp_path / "home")})


def _tenant_events(tenant: str, count: int) -> list[dict]:
    return [
        llm(f"{tenant}-{i}", tenant_id=tenant, session_id=f"{tenant}-s{i}") for i in range(count)
    ]


def test_one_tenants_line_too_long_costs_no_other_tenant_an_event(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ledger.commands.cli import main

    home = tmp_path / "home"
    landing = home / "landing"
    # Tenant A's 3 MB event, between two of its own, first in the batch; then 15 events of two
    # other tenants in the files after it, validated in the same batch.
    long_event = llm("a-long", tenant_id="tenant-a", session_id="a-s", route="r" * 3_000_000)
    long_line = json.dumps(long_event)
    first = write_jsonl(
        landing / "a.jsonl", [*_tenant_events("tenant-a", 1), long_line, llm("a-2", **_a(2))]
    )
    write_jsonl(landing / "b.jsonl", _tenant_events("tenant-b", 8))
    write_jsonl(landing / "c.jsonl", _tenant_events("tenant-c", 7))

    result = CliRunner().invoke(main, ["ingest"], env={"LEDGER_HOME": str(home)})

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split(" in ")[0] for line in lines if line.startswith(str(first))] == [
        f"{first}: 3 rows, 2 accepted, 0 duplicates, 1 quarantined (line_too_long 1)"
    ]
    assert lines[-1].startswith(
        "3 files ingested (0 already ingested): 17 events accepted, 0 duplicates dropped, "
        "1 rows quarantined"
    )
    settings = Settings.from_env({"LEDGER_HOME": str(home)})
    assert query(settings, "select tenant_id, count(*) from raw.events group by 1 order by 1") == [
        ("tenant-a", 2),
        ("tenant-b", 8),
        ("tenant-c", 7),
    ]
    assert len(long_line.encode()) == 3_000_300
    assert query(
        settings,
        "select source_file, line_number, reason, detail, raw_text, source, event_id "
        "from raw.quarantine",
    ) == [
        (
            str(first),
            2,
            "line_too_long",
            "3,000,300 bytes, over the line limit of 2,000,000 bytes",
            long_line[:1024],
            None,
            None,
        )
    ]
    # Nothing is left to read again: the next run changes nothing.
    again = CliRunner().invoke(main, ["ingest"], env={"LEDGER_HOME": str(home)})
    assert again.output.splitlines()[-1].startswith("0 files ingested (3 already ingested)")


def _a(number: int) -> dict:
    return {"tenant_id": "tenant-a", "session_id": f"a-s{number}"}


def test_the_line_limit_is_a_setting_and_holds_to_the_byte(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {"LEDGER_HOME": str(tmp_path / "home"), "LEDGER_MAX_LINE_BYTES": "4096"}
    )
    # Lines of exactly the limit are judged as usual, with either line break; one byte more is
    # too long, its size counted without the line break.
    path = tmp_path / "in" / "edge.jsonl"
    path.parent.mkdir()
    path.write_bytes(
        b"\r\n".join([b"x" * 4096, b"y" * 4097, json.dumps(llm("1")).encode()])
        + b"\n".join([b"", b"z" * 4096, b"w" * 5000])
    )

    [result] = ingest_paths(settings, [path], ingest_time=INGEST_TIME)

    assert (result.rows, result.accepted, result.reasons) == (
        5,
        1,
        {"malformed_json": 2, "line_too_long": 2},
    )
    assert query(
        settings,
        "select line_number, reason, detail, length(raw_text) from raw.quarantine order by 1",
    ) == [
        (1, "malformed_json", None, 4096),
        (2, "line_too_long", "4,097 bytes, over the line limit of 4,096 bytes", 1024),
        (4, "malformed_json", None, 4096),
        (5, "line_too_long", "5,000 bytes, over the line limit of 4,096 bytes", 1024),
    ]
    with pytest.raises(ValidationError, match="LEDGER_MAX_LINE_BYTES must be at least 4096"):
        Settings.from_env({"LEDGER_MAX_LINE_BYTES": "4095"})
    assert Settings().max_line_bytes == 2_000_000


def test_a_long_line_across_the_pieces_of_a_large_file_is_quarantined_by_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ledger.ingest.files as files

    environment = {"LEDGER_MAX_LINE_BYTES": "4096"}
    whole = Settings.from_env({**environment, "LEDGER_HOME": str(tmp_path / "whole")})
    pieces = Settings.from_env({**environment, "LEDGER_HOME": str(tmp_path / "pieces")})
    rows = [*_tenant_events("tenant-b", 6), "r" * 20_000, *_tenant_events("tenant-c", 6)]
    path = write_jsonl(tmp_path / "big.jsonl", rows)
    [expected] = ingest_paths(whole, [path], ingest_time=INGEST_TIME)
    # Pieces of about 1,500 bytes: the 20,000-byte line spans more than ten reads.
    monkeypatch.setattr(files, "CHUNKED_ABOVE_BYTES", 100)
    monkeypatch.setattr(files, "CHUNK_BYTES", 1500)

    [result] = ingest_paths(pieces, [path], ingest_time=INGEST_TIME)

    assert (expected.accepted, expected.reasons) == (12, {"line_too_long": 1})
    assert (result.accepted, result.reasons) == (12, {"line_too_long": 1})
    quarantined = "select line_number, reason, detail, raw_text from raw.quarantine"
    assert query(pieces, quarantined) == [
        (7, "line_too_long", "20,000 bytes, over the line limit of 4,096 bytes", "r" * 1024)
    ]
    assert query(pieces, quarantined) == query(whole, quarantined)
    events = "select event_id, line_number from raw.events order by 2"
    assert query(pieces, events) == query(whole, events)
    assert [line for _, line in query(pieces, events)] == [1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13]


# Ingests one file into a new home; prints its result and the process's peak resident memory.
_INGEST_AND_REPORT_PEAK = """
import resource, sys
from pathlib import Path
from ledger.core.settings import Settings
from ledger.ingest import ingest_paths
[result] = ingest_paths(Settings.from_env({"LEDGER_HOME": sys.argv[1]}), [Path(sys.argv[2])])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
print(f"\\n{result.accepted} {result.reasons} {peak}")
"""


def _ingested_in_a_process(home: Path, path: Path) -> tuple[str, int]:
    """`path` ingested by a process of its own: its result, and the process's peak memory."""
    ran = subprocess.run(
        [sys.executable, "-c", _INGEST_AND_REPORT_PEAK, str(home), str(path)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    # (the last line: DuckDB may draw a progress bar before it)
    result, _, peak = ran.stdout.splitlines()[-1].rpartition(" ")
    return result, int(peak)


def test_a_line_of_hundreds_of_megabytes_is_read_past_in_bounded_memory(tmp_path: Path) -> None:
    from ledger.ingest.files import is_large

    # 400 MB of one line, compressed to under 2 MB (a small file, validated with others in a
    # batch): read whole, it would take 400 MB as bytes and as much again as text.
    line_bytes = 400 * 2**20
    bomb, plain = tmp_path / "bomb.jsonl.gz", tmp_path / "plain.jsonl.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as out:
        out.write(json.dumps(llm("1")).encode() + b"\n")
        block = b"r" * 2**20
        for _ in range(line_bytes // len(block)):
            out.write(block)
        out.write(b"\n" + json.dumps(llm("2")).encode() + b"\n")
    assert not is_large(bomb)
    with gzip.open(plain, "wb") as out:
        out.write(b"\n".join(json.dumps(llm(f"{i}")).encode() for i in (1, 2)) + b"\n")

    result, peak = _ingested_in_a_process(tmp_path / "home", bomb)
    plain_result, plain_peak = _ingested_in_a_process(tmp_path / "plain-home", plain)

    assert (result, plain_result) == ("2 {'line_too_long': 1}", "2 {}")
    # What the line costs over an ingest of the same events without it: DuckDB's buffers as
    # its reader gives up on the line, far less than the line.
    assert peak - plain_peak < line_bytes / 2, f"{(peak - plain_peak) / 2**20:.0f} MB more"


def test_a_file_an_earlier_version_quarantined_whole_for_a_long_line_is_read_again(
    settings: Settings, tmp_path: Path
) -> None:
    from ledger.ingest.files import content_sha256
    from ledger.warehouse import connect

    landing = tmp_path / "landing"
    victim = write_jsonl(landing / "b.jsonl", _tenant_events("tenant-b", 3))
    broken = write_jsonl(landing / "c.jsonl.gz", [])
    broken.write_bytes(b"not gzip")
    ingest_paths(settings, [write_jsonl(tmp_path / "first.jsonl", [llm("1")])])
    # What an earlier version wrote for a file after a long line in its batch: quarantined whole
    # with the error of a connection the long line had left busy, "skipped until its content
    # changes". A file quarantined whole for its own fault stays so.
    busy = (
        "ResourceInUseException: Resource In Use Error: connection has an unfinished result "
        "from execute(); call complete() or abort()"
    )
    with connect(settings.warehouse_path) as con:
        for file_id, path, detail in ((7, victim, busy), (8, broken, "IOException: not gzip")):
            con.execute(
                "insert into raw.quarantine (file_id, source_file, reason, detail, "
                "quarantined_at) values (?, ?, 'unreadable_file', ?, '2026-11-29 12:00')",
                [file_id, str(path), detail],
            )
            con.execute(
                "insert into raw.ingested_files values (?, ?, ?, ?, 0, 0, 0, 1, "
                "'2026-11-29 12:00', 5)",
                [file_id, str(path), content_sha256(path), path.stat().st_size],
            )

    results = ingest_paths(settings, [landing], ingest_time=INGEST_TIME)

    assert [(r.path.name, r.status, r.accepted) for r in results] == [
        ("b.jsonl", "ingested", 3),
        ("c.jsonl.gz", "already_ingested", 0),
    ]
    assert query(settings, "select path, rows, accepted from raw.ingested_files order by 1") == [
        (str(tmp_path / "first.jsonl"), 1, 1),
        (str(victim), 3, 3),
        (str(broken), 0, 0),
    ]
    assert query(settings, "select source_file, detail from raw.quarantine") == [
        (str(broken), "IOException: not gzip")
    ]
