"""`make test`'s scheduling units (tests/plugins/worker_units.py): a warehouse-building fixture
shared outside its unit is refused at collection, naming the files and the fixture."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.plugins.worker_units import WORKER_UNITS, check_worker_units

REPO = Path(__file__).resolve().parents[1]


def _item(nodeid: str, *fixtures: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, fixturenames=["tmp_path", *fixtures])


def test_files_sharing_a_warehouse_within_their_unit_pass():
    boards = WORKER_UNITS["boards_home+planning_home"]
    check_worker_units(
        [
            _item(f"{boards[0]}::test_a", "boards_home"),
            _item(f"{boards[1]}::test_b", "boards_home"),
            _item("tests/test_cli.py::test_c"),
            _item("tests/finops/test_finops.py::test_d", "finops_home"),
        ]
    )


def test_a_file_sharing_a_warehouse_outside_its_unit_is_refused_by_name():
    boards = WORKER_UNITS["boards_home+planning_home"]
    with pytest.raises(pytest.UsageError) as refused:
        check_worker_units(
            [
                _item(f"{boards[0]}::test_a", "boards_home"),
                _item("tests/test_new.py::test_b", "boards_home"),
            ]
        )
    assert str(refused.value) == (
        f"{boards[0]}, tests/test_new.py share the session fixture boards_home but not a unit of "
        "WORKER_UNITS (tests/plugins/worker_units.py): put them in one, so that `make test` "
        "builds that warehouse once"
    )


# ---- a suite that never hangs -------------------------------------------------------------------

CRASHING_FILE = """
import os

def test_a():
    pass

def test_b():
    os._exit(1)  # the worker dies here, as one killed by the kernel or a hung test's watchdog

def test_c():
    pass

def test_d():
    pass
"""


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest in its own process on a folder of throwaway test files, with this plugin loaded."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.plugins.worker_units",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(folder),
            *args,
            str(folder),
        ],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_crashed_workers_unit_goes_on_without_the_test_it_crashed_in(tmp_path: Path):
    (tmp_path / "test_crashing.py").write_text(CRASHING_FILE)
    (tmp_path / "test_other.py").write_text("def test_e():\n    pass\n")

    run = _pytest(tmp_path, "-n", "2", "--dist", "loadfile")

    # The crash is reported once, one worker replaces the crashed one (the test is not run
    # again), and the rest of its unit runs.
    assert run.returncode == 1, run.stdout
    assert run.stdout.count("replacing crashed worker") == 1, run.stdout
    assert re.search(r"worker 'gw\d' crashed while running 'test_crashing.py::test_b'", run.stdout)
    assert "= 1 failed, 4 passed in " in run.stdout


def test_a_hung_test_fails_with_every_threads_stack_and_the_run_goes_on(tmp_path: Path):
    (tmp_path / "test_hanging.py").write_text(
        "import threading\n\n"
        "def test_waits_for_ever():\n"
        "    stuck = threading.Event()\n"
        "    threading.Thread(target=stuck.wait, name='reader', daemon=True).start()\n"
        "    stuck.wait()\n\n"
        "def test_after():\n"
        "    pass\n"
    )

    run = _pytest(tmp_path, "-p", "no:xdist", "--timeout", "3", "--tb=short")

    assert run.returncode == 1, run.stdout
    # Every thread's stack, the stuck one's line included, then the failure; the next test runs.
    assert "+++++ Timeout +++++" in run.stdout
    assert "~~~~ Stack of reader" in run.stdout
    assert "test_hanging.py:6: in test_waits_for_ever\n    stuck.wait()" in run.stdout
    assert (
        "FAILED test_hanging.py::test_waits_for_ever - Failed: Timeout (>3.0s) from pytest-timeout"
        in run.stdout
    )
    assert "1 failed, 1 passed" in run.stdout
