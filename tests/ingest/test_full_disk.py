"""A full disk (issue 39): a command stops in one line, never a traceback per file, and keeps
nothing half-written, so the run after space is freed goes in whole."""

from __future__ import annotations

import errno
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ledger.commands.cli import main
from ledger.core.settings import Settings
from tests.support.events import llm, query, write_jsonl

PARQUET = "/srv/home/raw/events/event_date=2026-11-01/part-0.parquet"


@pytest.mark.parametrize(
    ("error", "where"),
    [
        (duckdb.IOException(f'IO Error: Could not write "{PARQUET}": No space left on device'), ""),
        (OSError(errno.ENOSPC, "No space left on device", PARQUET), f" writing {PARQUET}"),
    ],
    ids=["duckdb", "python"],
)
def test_a_full_disk_stops_an_ingest_in_one_line_and_the_next_run_goes_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception, where: str
) -> None:
    import ledger.ingest.load as load

    home = tmp_path / "home"
    write_jsonl(home / "landing" / "a.jsonl", [llm("1"), llm("2")])

    def no_space(*args: object, **kwargs: object) -> list[Path]:
        raise error

    with monkeypatch.context() as patched:
        patched.setattr(load, "land_events", no_space)
        full = CliRunner().invoke(main, ["ingest"], env={"LEDGER_HOME": str(home)})

    # (after the blank line the progress bar leaves)
    assert (full.exit_code, full.output.strip()) == (
        1,
        f"Error: the disk is full (No space left on device{where}): nothing was half-written; "
        "free some space and run the command again",
    )
    settings = Settings(home=home)
    assert query(settings, "select count(*) from raw.ingested_files") == [(0,)]

    freed = CliRunner().invoke(main, ["ingest"], env={"LEDGER_HOME": str(home)})

    assert freed.exit_code == 0, freed.output
    assert query(settings, "select event_id from raw.events order by 1") == [("1",), ("2",)]
