"""`make test`'s scheduling units (tests/plugins/worker_units.py): a warehouse-building fixture
shared outside its unit is refused at collection, naming the files and the fixture."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.plugins.worker_units import WORKER_UNITS, check_worker_units


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
