"""A killed build leaves no dbt behind (issue 13, point 9).

`ledger build` runs dbt as a child process (Dagster's DbtCliResource). Killed with SIGKILL, the
build used to leave that dbt running on with the warehouse's write lock until it finished by itself
(about 30 s on the demo month). Its dbt is now `ledger-dbt` (ledger/pipeline/dbt_child.py), which the kernel
signals when its parent dies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import psutil
import pytest

from dagster_project.defs.ledger_dbt import dbt_executable
from ledger.core.settings import REPO_ROOT
from tests.support.homes import boards_write_landing

pytestmark = pytest.mark.integration

# Generous: the kernel signals the child as the parent dies; a dbt left running takes ~30 s.
CHILD_GONE_WITHIN_SECONDS = 15


def _dbt_child(build: psutil.Process) -> psutil.Process:
    """The build's dbt child, once it has started (however long a loaded machine takes)."""
    while build.is_running() and build.status() != psutil.STATUS_ZOMBIE:
        for child in build.children(recursive=True):
            try:
                if "build" in child.cmdline() and any("dbt" in p for p in child.cmdline()[:2]):
                    return child
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.05)
    pytest.fail("`ledger build` started no dbt child")


def test_the_pipeline_runs_dbt_through_ledger_dbt():
    assert Path(dbt_executable()) == Path(sys.executable).parent / "ledger-dbt"


def test_a_killed_build_takes_its_dbt_with_it_and_frees_the_warehouse(tmp_path: Path):
    home = tmp_path / "home"
    boards_write_landing(home / "landing")
    env = {
        **os.environ,
        "LEDGER_HOME": str(home),
        "LEDGER_REFERENCE_DIR": str(REPO_ROOT / "data" / "reference"),
    }
    build = subprocess.Popen(
        [sys.executable, "-m", "ledger.commands.cli", "build"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        dbt = _dbt_child(psutil.Process(build.pid))
        assert Path(dbt.cmdline()[1]).name == "ledger-dbt"
        build.send_signal(signal.SIGKILL)
        build.wait()
        try:
            dbt.wait(timeout=CHILD_GONE_WITHIN_SECONDS)
        except psutil.TimeoutExpired:
            dbt.kill()
            pytest.fail(f"dbt ran on for {CHILD_GONE_WITHIN_SECONDS} s after its build was killed")
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
    # The write lock is free: the next writer opens the warehouse at once (with the manifest rows
    # of the events the build ingested before dbt started: one Parquet file per event date).
    with duckdb.connect(str(home / "warehouse.duckdb")) as con:
        assert con.execute("select count(*) from raw.event_files").fetchone() == (3,)


def _block_sigterm() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _ignore_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


# What the starting process passes on through exec: nothing, SIGTERM blocked, SIGTERM ignored. (On
# a clean checkout a pytest-xdist worker once passed one of the last two on, and dbt ran on.)
@pytest.mark.parametrize("inherited", [None, _block_sigterm, _ignore_sigterm])
def test_a_ledger_dbt_whose_build_died_while_it_started_ends_without_running_dbt(inherited):
    # The build named in LEDGER_DBT_PARENT_PID is not this child's parent any more: the build was
    # killed before the child asked to be signalled, and the child was reparented.
    orphaned = subprocess.run(
        [dbt_executable(), "--version"],
        env={**os.environ, "LEDGER_DBT_PARENT_PID": str(os.getpid() + 1_000_000)},
        preexec_fn=inherited,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (orphaned.returncode, orphaned.stdout) == (-signal.SIGTERM, "")
    # Its real parent named: dbt runs.
    adopted = subprocess.run(
        [dbt_executable(), "--version"],
        env={**os.environ, "LEDGER_DBT_PARENT_PID": str(os.getpid())},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert adopted.returncode == 0
    assert "Core:" in adopted.stdout
