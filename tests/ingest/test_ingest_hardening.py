"""Ingest hardening (issue 13): unreadable files, symbolic links in the landing folder."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import duckdb
import pytest

from ledger.core.settings import Settings
from ledger.ingest import ingest_paths
from ledger.ingest.files import REFUSED_HARDLINK, REFUSED_OUTSIDE, REFUSED_SYMLINK, discover
from tests.support.events import INGEST_TIME, llm, query, write_jsonl


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env({"LEDGER_HOME": str(tmp_path / "home")})


def _unreadable_files(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    body = "\n".join(json.dumps(llm(f"z-{i}")) for i in range(2000)) + "\n"
    whole = gzip.compress(body.encode())
    truncated = folder / "a-truncated.jsonl.gz"
    truncated.write_bytes(whole[: len(whole) // 2])
    not_gzip = folder / "b-not-gzip.jsonl.gz"
    not_gzip.write_text(json.dumps(llm("plain")) + "\n")
    not_parquet = folder / "c-not-parquet.parquet"
    not_parquet.write_text("this is not a parquet file")
    return {"truncated": truncated, "not_gzip": not_gzip, "not_parquet": not_parquet}


def test_an_unreadable_file_is_quarantined_whole_and_every_other_file_goes_in(
    settings: Settings, tmp_path: Path
) -> None:
    landing = tmp_path / "landing"
    bad = _unreadable_files(landing)
    good_before = write_jsonl(landing / "0-good.jsonl", [llm("g-1")])
    good_after = write_jsonl(landing / "d-good.jsonl", [llm("g-2"), llm("g-3")])

    results = ingest_paths(settings, [landing], ingest_time=INGEST_TIME)

    assert [(r.path.name, r.status, r.accepted, r.quarantined) for r in results] == [
        (good_before.name, "ingested", 1, 0),
        (bad["truncated"].name, "ingested", 0, 1),
        (bad["not_gzip"].name, "ingested", 0, 1),
        (bad["not_parquet"].name, "ingested", 0, 1),
        (good_after.name, "ingested", 2, 0),
    ]
    assert query(settings, "select event_id from raw.events order by 1") == [
        ("g-1",),
        ("g-2",),
        ("g-3",),
    ]
    rows = query(
        settings,
        "select source_file, line_number, reason, raw_text, detail from raw.quarantine "
        "order by source_file",
    )
    assert [row[:4] for row in rows] == [
        (str(bad["truncated"]), None, "unreadable_file", None),
        (str(bad["not_gzip"]), None, "unreadable_file", None),
        (str(bad["not_parquet"]), None, "unreadable_file", None),
    ]
    details = [row[4] for row in rows]
    assert details[0].startswith("IOException:") and "GZIP" in details[0]
    assert details[1].startswith("IOException:") and "not a GZIP stream" in details[1]
    assert details[2].startswith("InvalidInputException:") and "No magic bytes" in details[2]
    assert all("\n" not in detail and "LINE 1" not in detail for detail in details)
    # Each is in the manifest, so the next run skips it.
    assert query(
        settings,
        "select rows, accepted, quarantined from raw.ingested_files where path like '%not-gzip%'",
    ) == [(0, 0, 1)]
    assert (
        results[2]
        .summary_line()
        .startswith(
            f"{bad['not_gzip']}: unreadable, quarantined as a whole (unreadable_file: IOException:"
        )
    )

    again = ingest_paths(settings, [landing], ingest_time=INGEST_TIME)
    assert {r.status for r in again} == {"already_ingested"}

    # A fixed file (new content) is read again and goes in.
    bad["not_gzip"].write_bytes(gzip.compress((json.dumps(llm("fixed")) + "\n").encode()))
    [fixed] = [r for r in ingest_paths(settings, [landing], ingest_time=INGEST_TIME) if r.accepted]
    assert (fixed.path, fixed.accepted) == (bad["not_gzip"], 1)
    assert query(settings, "select count(*) from raw.quarantine") == [(3,)]


def test_an_unreadable_file_alone_does_not_fail_the_run(settings: Settings, tmp_path: Path) -> None:
    bad = _unreadable_files(tmp_path / "in")

    [result] = ingest_paths(settings, [bad["not_parquet"]], ingest_time=INGEST_TIME)

    assert (result.status, result.reasons) == ("ingested", {"unreadable_file": 1})


def test_unreadable_file_and_line_too_long_are_contract_quarantine_reasons() -> None:
    from ledger.contract.fields import QUARANTINE_REASONS

    assert QUARANTINE_REASONS[-1] == "unreadable_file"
    # and a line too long, the first thing known of a line
    assert QUARANTINE_REASONS[0] == "line_too_long"


def test_landing_discovery_refuses_symbolic_links_and_says_so(
    settings: Settings, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    secret = write_jsonl(outside / "secret.jsonl", ["root:x:0:0:root:/root:/bin/bash"])
    write_jsonl(outside / "sub" / "more.jsonl", [llm("from-linked-folder")])
    landing = tmp_path / "landing"
    real = write_jsonl(landing / "real.jsonl", [llm("r-1")])
    (landing / "to-secret.jsonl").symlink_to(secret)
    (landing / "to-real.jsonl").symlink_to(real)
    (landing / "linked-folder").symlink_to(outside / "sub", target_is_directory=True)
    direct = tmp_path / "direct-link.jsonl"
    direct.symlink_to(secret)
    refused: list[tuple[str, str]] = []

    results = ingest_paths(
        settings,
        [landing, direct],
        ingest_time=INGEST_TIME,
        on_refused=lambda path, why: refused.append((path.name, why)),
    )

    assert [(r.path, r.accepted) for r in results] == [(real, 1)]
    assert sorted(refused) == [
        ("direct-link.jsonl", REFUSED_SYMLINK),
        ("linked-folder", REFUSED_SYMLINK),
        ("to-real.jsonl", REFUSED_SYMLINK),
        ("to-secret.jsonl", REFUSED_SYMLINK),
    ]
    assert query(settings, "select count(*) from raw.quarantine") == [(0,)]
    assert query(settings, "select event_id from raw.events") == [("r-1",)]


def test_a_landing_folder_named_through_a_link_is_searched_where_it_is(tmp_path: Path) -> None:
    # The folder named on the command line may be reached through a link (a mounted volume);
    # what is refused is a link inside it.
    real = write_jsonl(tmp_path / "real-landing" / "a.jsonl", [llm("1")])
    (tmp_path / "landing").symlink_to(tmp_path / "real-landing", target_is_directory=True)
    refused: list[tuple[Path, str]] = []

    found = discover([tmp_path / "landing"], lambda p, why: refused.append((p, why)))

    assert (found, refused) == ([real.resolve()], [])


def test_the_cli_prints_refused_links(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ledger.commands.cli import main

    home = tmp_path / "home"
    landing = home / "landing"
    landing.mkdir(parents=True)
    target = write_jsonl(tmp_path / "passwd.jsonl", ["root:x:0:0"])
    (landing / "passwd.jsonl").symlink_to(target)

    result = CliRunner().invoke(main, ["ingest"], env={"LEDGER_HOME": str(home)})

    assert result.exit_code == 0, result.output
    assert f"{landing / 'passwd.jsonl'}: {REFUSED_SYMLINK}" in " ".join(result.output.split())
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from raw.quarantine").fetchall() == [(0,)]


def test_quarantined_raw_text_is_kept_for_the_retention_then_cleared(tmp_path: Path) -> None:
    from datetime import timedelta

    settings = Settings.from_env(
        {"LEDGER_HOME": str(tmp_path / "home"), "LEDGER_QUARANTINE_RETENTION_DAYS": "30"}
    )
    first = write_jsonl(tmp_path / "a.jsonl", [llm("1"), "{my card is 4111 1111 1111 1111"])
    second = write_jsonl(tmp_path / "b.jsonl", [llm("2", transcript="hello")])
    ingest_paths(settings, [first], ingest_time=INGEST_TIME)
    # 30 days later to the second: nothing is older than the retention yet.
    ingest_paths(settings, [second], ingest_time=INGEST_TIME + timedelta(days=30))
    texts = (
        "select source_file, line_number, reason, raw_text is null from raw.quarantine order by 1"
    )
    assert query(settings, texts) == [
        (str(first), 2, "malformed_json", False),
        (str(second), 1, "unknown_field", False),
    ]

    # Any later run (here one with nothing new) clears the text of lines older than 30 days.
    ingest_paths(settings, [first], ingest_time=INGEST_TIME + timedelta(days=30, seconds=1))

    assert query(settings, texts) == [
        (str(first), 2, "malformed_json", True),
        (str(second), 1, "unknown_field", False),
    ]
    assert query(settings, "select event_id from raw.events") == [("1",)]


def test_quarantine_retention_setting_defaults_to_30_days_and_refuses_negative() -> None:
    from pydantic import ValidationError

    assert Settings.from_env({}).quarantine_retention_days == 30
    assert (
        Settings.from_env({"LEDGER_QUARANTINE_RETENTION_DAYS": "7"}).quarantine_retention_days == 7
    )
    with pytest.raises(ValidationError, match="LEDGER_QUARANTINE_RETENTION_DAYS"):
        Settings.from_env({"LEDGER_QUARANTINE_RETENTION_DAYS": "-1"})


def _conflicting_landing(settings: Settings) -> tuple[Path, Path]:
    """Two landing files with different versions of key (gw-1, k); `b` arrives (is ingested)
    first, so its version is the one kept, although `a` sorts first by path."""
    from datetime import timedelta

    landing = settings.landing_dir
    a = write_jsonl(landing / "a.jsonl", [llm("k", input_tokens=111), llm("a-only")])
    b = write_jsonl(
        landing / "b.jsonl",
        [llm("k", input_tokens=222), llm("ahead", occurred_at="2026-11-30T13:00:00Z")],
    )
    ingest_paths(settings, [b], ingest_time=INGEST_TIME)
    ingest_paths(settings, [a], ingest_time=INGEST_TIME + timedelta(hours=2))
    return a, b


KEPT = "select event_id, input_tokens from raw.events order by 1"
QUARANTINED = "select source_file, line_number, reason from raw.quarantine order by 1, 2"


def test_recover_keeps_the_first_ingested_version_in_manifest_order(
    settings: Settings, tmp_path: Path
) -> None:
    from datetime import timedelta

    from ledger.ingest.recover import recover

    a, b = _conflicting_landing(settings)
    before = (query(settings, KEPT), query(settings, QUARANTINED))
    assert before == (
        [("a-only", 100), ("k", 222)],
        [(str(a), 1, "id_conflict"), (str(b), 2, "future_timestamp")],
    )

    recovery = recover(settings, now=INGEST_TIME + timedelta(days=3))

    assert recovery.manifest_order and recovery.missing == []
    # Same kept version (b's), and the line an hour ahead of its original ingest time is still
    # future_timestamp (files go in with their original ingest time, not the recovery's).
    assert (query(settings, KEPT), query(settings, QUARANTINED)) == before
    assert query(settings, "select path from raw.ingested_files order by file_id") == [
        (str(b),),
        (str(a),),
    ]
    assert recovery.kept_old == settings.warehouse_path.with_name(
        "warehouse.duckdb.before-recover-20261203T120000Z"
    )
    assert recovery.kept_old.exists()
    assert recovery.kept_old.with_name(recovery.kept_old.name + ".raw").is_dir()
    # The recovered warehouse goes on as usual: its Parquet files are where the view says.
    later = write_jsonl(tmp_path / "later.jsonl", [llm("k", input_tokens=222), llm("new")])
    [result] = ingest_paths(settings, [later], ingest_time=INGEST_TIME + timedelta(days=3))
    assert (result.accepted, result.duplicates) == (1, 1)
    assert query(settings, KEPT) == [("a-only", 100), ("k", 222), ("new", 100)]
    assert query(settings, "select count(*) from raw.event_files") == [(3,)]


def test_a_damaged_warehouse_names_ledger_recover_and_recover_rebuilds_it(
    settings: Settings, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from ledger.commands.cli import main

    _a, _b = _conflicting_landing(settings)
    with settings.warehouse_path.open("r+b") as handle:  # the header is gone
        handle.write(b"\0garbage" * 512)
    env = {"LEDGER_HOME": str(settings.home)}
    # A published copy exists (readers never build), so the review gets as far as the warehouse.
    settings.published_path.parent.mkdir(parents=True, exist_ok=True)
    duckdb.connect(str(settings.published_path)).close()

    for command in (["ingest"], ["report", "weekly"]):
        failed = CliRunner().invoke(main, command, env=env)
        assert failed.exit_code == 1, (command, failed.output)
        lines = failed.output.strip().splitlines()
        assert len(lines) == 1, failed.output
        assert lines[0].startswith("Error: the warehouse is damaged and cannot be read (IO Error:")
        assert "rebuild it from the landing folder with `ledger recover`" in lines[0]

    recovered = CliRunner().invoke(main, ["recover"], env=env)

    assert recovered.exit_code == 0, recovered.output
    output = " ".join(recovered.output.split())
    assert "in path order (the old manifest could not be read)" in output
    assert "recovered" in output and "from 2 files" in output
    # With no manifest, path order decides: a's version is the one kept now; and the line that
    # was ahead of its original ingest time is in the past by the recovery's clock.
    assert query(settings, "select event_id, input_tokens from raw.events order by 1") == [
        ("a-only", 100),
        ("ahead", 100),
        ("k", 111),
    ]
    assert sorted(p.name for p in settings.home.glob("warehouse.duckdb.before-recover-*")) != []
    assert CliRunner().invoke(main, ["ingest"], env=env).exit_code == 0


@pytest.mark.parametrize("damage", ["zero bytes", "second half cut off"])
def test_a_damaged_warehouse_stops_a_build_in_one_line_naming_ledger_recover(
    settings: Settings, damage: str
) -> None:
    from click.testing import CliRunner

    from ledger.commands.cli import main

    settings.ensure_dirs()
    with duckdb.connect(str(settings.warehouse_path)) as con:  # a warehouse of several blocks
        con.execute("create table filler as select range as i from range(1000000)")
    size = settings.warehouse_path.stat().st_size
    with settings.warehouse_path.open("r+b") as handle:
        handle.truncate(0 if damage == "zero bytes" else size // 2)

    failed = CliRunner().invoke(main, ["build"], env={"LEDGER_HOME": str(settings.home)})

    assert failed.exit_code == 1, failed.output
    lines = failed.output.strip().splitlines()
    assert len(lines) == 2, failed.output  # the "building: ..." line, then the error
    assert lines[1].startswith("Error: the warehouse is damaged and cannot be read (IO Error:")
    assert lines[1].endswith(
        "rebuild it from the landing folder with `ledger recover` (the damaged file is kept aside)"
    )


def _mixed_lines() -> list[dict | str]:
    lines: list[dict | str] = [llm(f"e-{i}", input_tokens=100 + i) for i in range(40)]
    lines[5] = "{broken"
    lines[12] = ""  # a blank line still counts as a line
    lines[25] = llm("e-3", input_tokens=103)  # duplicate of line 4 (an earlier piece)
    lines[31] = llm("e-7", input_tokens=999)  # conflict with line 8 (an earlier piece)
    lines[38] = llm("x", input_tokens=-1)
    return lines


OUTCOME = (
    "select count(*), min(line_number), max(line_number), sum(input_tokens) from raw.events",
    "select line_number, reason, raw_text from raw.quarantine order by line_number",
)


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".parquet"])
def test_a_large_file_goes_in_a_piece_at_a_time_as_one_transaction_with_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    import polars as pl

    import ledger.ingest.files as files

    lines = _mixed_lines()
    path = tmp_path / f"big{suffix}"
    plain = write_jsonl(tmp_path / "plain.jsonl", lines)
    if suffix == ".jsonl.gz":
        path.write_bytes(gzip.compress(plain.read_bytes()))
    elif suffix == ".parquet":
        rows = [row for row in lines if isinstance(row, dict)]
        pl.DataFrame(rows).write_parquet(path, row_group_size=7)
        plain = tmp_path / "whole.parquet"  # the same file, ingested whole
        plain.write_bytes(path.read_bytes())
    else:
        plain.rename(path)
        plain = write_jsonl(tmp_path / "plain.jsonl", lines)
    whole = Settings.from_env({"LEDGER_HOME": str(tmp_path / "whole")})
    pieces = Settings.from_env({"LEDGER_HOME": str(tmp_path / "pieces")})
    [expected] = ingest_paths(whole, [plain], ingest_time=INGEST_TIME)
    monkeypatch.setattr(files, "CHUNKED_ABOVE_BYTES", 100)
    monkeypatch.setattr(files, "CHUNK_BYTES", 1500)  # about 5 lines a piece
    seen: list[int] = []
    real_chunks = files.chunks

    def counted(*args, **kwargs):
        for piece in real_chunks(*args, **kwargs):
            seen.append(piece[1])
            yield piece

    monkeypatch.setattr("ledger.ingest.chunks", counted)

    [result] = ingest_paths(pieces, [path], ingest_time=INGEST_TIME)

    assert len(seen) >= 5 and seen == sorted(seen)  # several pieces, in order
    assert (result.rows, result.accepted, result.duplicates, result.quarantined) == (
        expected.rows,
        expected.accepted,
        expected.duplicates,
        expected.quarantined,
    )
    assert result.reasons == expected.reasons
    for sql in OUTCOME:
        assert query(pieces, sql) == query(whole, sql)
    assert query(pieces, "select count(*) from raw.event_keys") == [(result.accepted,)]


def test_a_large_file_unreadable_half_way_leaves_nothing_but_its_quarantine_row(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ledger.ingest.files as files

    monkeypatch.setattr(files, "CHUNKED_ABOVE_BYTES", 100)
    monkeypatch.setattr(files, "CHUNK_BYTES", 1500)
    body = "\n".join(json.dumps(llm(f"t-{i}")) for i in range(400)) + "\n"
    whole = gzip.compress(body.encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) * 2 // 3])

    [result] = ingest_paths(settings, [path], ingest_time=INGEST_TIME)

    assert (result.accepted, result.reasons) == (0, {"unreadable_file": 1})
    assert query(settings, "select count(*) from raw.events") == [(0,)]
    assert query(settings, "select count(*) from raw.event_keys") == [(0,)]
    assert list((settings.home / "raw").rglob("*.parquet")) == []
    assert query(settings, "select reason, line_number from raw.quarantine") == [
        ("unreadable_file", None)
    ]


def test_a_moved_home_reads_its_own_parquet_files_after_the_next_ingest(tmp_path: Path) -> None:
    old = Settings.from_env({"LEDGER_HOME": str(tmp_path / "old")})
    ingest_paths(old, [write_jsonl(tmp_path / "a.jsonl", [llm("1")])], ingest_time=INGEST_TIME)
    (tmp_path / "old").rename(tmp_path / "new")
    new = Settings.from_env({"LEDGER_HOME": str(tmp_path / "new")})

    ingest_paths(new, [write_jsonl(tmp_path / "b.jsonl", [llm("2")])], ingest_time=INGEST_TIME)

    assert query(new, "select event_id from raw.events order by 1") == [("1",), ("2",)]
    [(view,)] = query(new, "select sql from duckdb_views() where view_name = 'events'")
    assert str(tmp_path / "old") not in view and str(tmp_path / "new" / "raw") in view


def test_the_cli_refuses_a_named_path_outside_the_landing_folder(settings: Settings) -> None:
    from click.testing import CliRunner

    from ledger.commands.cli import main

    landing = settings.landing_dir
    inside = write_jsonl(landing / "in.jsonl", [llm("in-1")])
    write_jsonl(settings.home.parent / "outside" / "file.jsonl", [llm("out-1")])
    escaping = landing / ".." / ".." / "outside" / "file.jsonl"  # ../outside/file.jsonl
    env = {"LEDGER_HOME": str(settings.home)}

    result = CliRunner().invoke(main, ["ingest", str(escaping), str(inside)], env=env)

    # The other path is ingested; a path the user named and that was not read fails the command.
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert f"{escaping}: {REFUSED_OUTSIDE} {landing}" in output
    assert "1 files ingested (0 already ingested): 1 events accepted" in output
    assert output.endswith(
        "Error: 1 of the paths named were refused (see above): nothing was read from them"
    )
    assert query(settings, "select event_id from raw.events") == [("in-1",)]
    # The library reads any folder it is given when no landing folder is named (tests, tools).
    assert discover([escaping]) == [escaping.resolve()]


def test_a_hard_link_in_the_landing_folder_is_refused_like_a_symbolic_link(
    settings: Settings, tmp_path: Path
) -> None:
    import os

    secret = write_jsonl(tmp_path / "outside" / "secret.jsonl", [llm("secret-1")])
    landing = tmp_path / "landing"
    real = write_jsonl(landing / "real.jsonl", [llm("r-1")])
    os.link(secret, landing / "linked.jsonl")
    os.link(secret, tmp_path / "linked-named.jsonl")
    refused: list[tuple[str, str]] = []

    results = ingest_paths(
        settings,
        [landing, tmp_path / "linked-named.jsonl"],
        ingest_time=INGEST_TIME,
        on_refused=lambda path, why: refused.append((path.name, why)),
    )

    assert [(r.path, r.accepted) for r in results] == [(real, 1)]
    assert sorted(refused) == [
        ("linked-named.jsonl", REFUSED_HARDLINK),
        ("linked.jsonl", REFUSED_HARDLINK),
    ]
    assert query(settings, "select event_id from raw.events") == [("r-1",)]


def test_control_characters_in_file_names_never_reach_the_terminal(settings: Settings) -> None:
    from click.testing import CliRunner

    from ledger.commands.cli import main

    landing = settings.landing_dir
    write_jsonl(landing / "clear\x1b[2J\x1b[31mred [/bold].jsonl", [llm("e-1")])
    outside = write_jsonl(settings.home.parent / "target.jsonl", [llm("e-2")])
    (landing / "title\x1b]0;pwned\x07\nfake line.jsonl").symlink_to(outside)
    env = {"LEDGER_HOME": str(settings.home)}

    outputs = [CliRunner().invoke(main, command, env=env) for command in (["ingest"], ["recover"])]

    for result in outputs:
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        output = " ".join(result.output.split())
        # The names are shown escaped, each on its one line; `[/bold]` is text, not markup.
        assert f"{landing}/clear\\x1b[2J\\x1b[31mred [/bold].jsonl: 1 rows" in output
        assert f"{landing}/title\\x1b]0;pwned\\x07\\nfake line.jsonl: {REFUSED_SYMLINK}" in output
    assert "1 files ingested" in outputs[0].output
    assert "recovered" in outputs[1].output


def test_the_cli_fails_when_the_only_path_named_is_refused(settings: Settings) -> None:
    from click.testing import CliRunner

    from ledger.commands.cli import main

    outside = write_jsonl(settings.home.parent / "elsewhere" / "file.jsonl", [llm("out-1")])
    env = {"LEDGER_HOME": str(settings.home)}
    settings.landing_dir.mkdir(parents=True, exist_ok=True)

    result = CliRunner().invoke(main, ["ingest", str(outside)], env=env)

    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert f"{outside}: {REFUSED_OUTSIDE} {settings.landing_dir}" in output
    assert "0 files ingested (0 already ingested): 0 events accepted" in output
    assert output.endswith(
        "Error: 1 of the paths named were refused (see above): nothing was read from them"
    )
