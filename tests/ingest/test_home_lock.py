"""One run at a time per home (SPEC 12): ingest, build, recover, the alert run and the weekly
review refused in one line that names the run holding the home; the lock is reentrant within a run
and freed when its holder dies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ledger.commands.cli import main
from ledger.core.home_lock import LOCK_NAME, HomeLocked, home_lock

_HOLDER = """
import sys, time
from pathlib import Path
from ledger.core.home_lock import home_lock
with home_lock(Path(sys.argv[1]), command="ledger build"):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.fixture
def held_home(tmp_path: Path):
    home = tmp_path / "home"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(home)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        yield home, holder.pid
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize(
    "command", [["ingest"], ["build"], ["recover"], ["alerts", "run"], ["report", "weekly"]]
)
def test_a_second_run_stops_in_one_line_naming_the_holder(held_home, command: list[str]):
    home, pid = held_home
    (home / "landing").mkdir(parents=True, exist_ok=True)

    refused = CliRunner().invoke(main, command, env={"LEDGER_HOME": str(home)})

    assert refused.exit_code == 1, refused.output
    [line] = refused.output.strip().splitlines()
    prefix = f"Error: another ledger run holds {home.resolve()}: pid {pid} (`ledger build`), since "
    assert line.startswith(prefix), line
    assert line.endswith(" UTC; wait for it to finish (or stop it) and run this command again")
    assert not (home / "warehouse.duckdb").exists()  # nothing of the second run happened


def test_the_lock_is_freed_when_its_holder_dies(held_home):
    home, _pid = held_home
    with pytest.raises(HomeLocked):
        with home_lock(home):
            pass
    subprocess.run(["kill", "-9", str(_pid)], check=True)
    # kill -9 leaves no chance to clean up: the operating system frees the flock all the same
    # (waiting, as a scheduled step does, returns once the holder is gone).
    with home_lock(home, wait=True, command="ledger ingest"):
        assert (home / LOCK_NAME).read_text().startswith('{"pid": ')


def test_the_lock_is_reentrant_within_a_run(tmp_path: Path):
    home = tmp_path / "home"
    with home_lock(home, command="ledger build"):
        with home_lock(home):  # the build's own ingest step
            with home_lock(home, wait=True):  # and its publish
                pass
        assert '"command": "ledger build"' in (home / LOCK_NAME).read_text()
    assert (home / LOCK_NAME).read_text() == ""  # released: nobody is named any more


def test_a_warehouse_open_for_writing_elsewhere_is_said_in_one_line(tmp_path: Path):
    """A command that only reads, run while a build writes: DuckDB's lock error becomes one line
    naming the writer, not a traceback."""
    import duckdb

    from ledger.warehouse import lock_conflict_message

    path = tmp_path / "warehouse.duckdb"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time, duckdb\n"
            "con = duckdb.connect(sys.argv[1])\n"
            "print('open', flush=True)\n"
            "time.sleep(120)\n",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout.readline() == "open\n"
        with pytest.raises(duckdb.Error) as refused:
            duckdb.connect(str(path), read_only=True)
    finally:
        writer.kill()
        writer.wait()

    assert lock_conflict_message(refused.value) == (
        f"{path} is open for writing in another process (pid {writer.pid}, a build or an "
        "ingest): wait for it to finish and run this command again"
    )
    assert lock_conflict_message(duckdb.Error("Catalog Error: no table x")) is None
