"""`make test`'s scheduling: the `integration` marker, and pytest-xdist units of files that share a
built warehouse.

`make test` runs two pytest-xdist workers with `--dist loadfile`: each worker takes a file at a
time, and a session fixture is built once per worker that asks for it. The files that share a
warehouse-building fixture are therefore scheduled as one unit (`pytest_xdist_make_scheduler`
below), so that each of those warehouses is built once; the Spark unit first, the other shared
units next, so that the longest builds overlap the rest instead of running alone at the end.
(pytest-xdist's own `loadgroup` cannot do this under pytest 9: it renames the test ids through
an attribute pytest no longer reads.) A file that starts to use one of these fixtures must join
its unit here; the collection refuses to run until it does.
"""

from __future__ import annotations

import pytest

# Session fixtures that build a warehouse (dbt, Dagster): a test using any of them, directly or
# through another fixture, is an `integration` test (`make test-fast` leaves those out).
BUILD_FIXTURES = frozenset(
    {
        "ledger_built_warehouse",
        "ops_template_home",
        "boards_home",
        "hostile_boards_home",
        "collect_run",
        "finops_home",
        "pipeline_home",
        "planning_home",
    }
)

WORKER_UNITS: dict[str, tuple[str, ...]] = {
    "spark+ledger_built_warehouse": (
        "tests/pipeline/test_spark.py",
        "tests/pipeline/test_ledger_dbt.py",
        "tests/pipeline/test_publish.py",
    ),
    "boards_home+planning_home": (
        "tests/boards/test_boards.py",
        "tests/boards/test_boards_access.py",
        "tests/boards/test_boards_browser.py",
        "tests/planning/test_capacity.py",
        "tests/planning/test_operations_board.py",
        "tests/planning/test_replay.py",
        "tests/planning/test_shadow.py",
        "tests/planning/test_whatif.py",
        "tests/planning/test_budget_review_shadow.py",
    ),
    "hostile_boards_home": ("tests/boards/test_boards_hostile_text.py",),
    "ops_template_home": (
        "tests/ops/test_alert_to_cause_browser.py",
        "tests/ops/test_alerts.py",
        "tests/ops/test_alerts_webhook.py",
        "tests/ops/test_backup.py",
        "tests/ops/test_ledger_up.py",
        "tests/ops/test_metric_layer.py",
        "tests/ops/test_weekly_report.py",
        "tests/ops/test_budget_review.py",
    ),
}
_UNIT_OF_FILE = {path: unit for unit, paths in WORKER_UNITS.items() for path in paths}


def _unit_of(nodeid: str) -> str:
    """A test's scheduling unit: its file's unit in WORKER_UNITS, else its file."""
    path = nodeid.split("::")[0]
    return _UNIT_OF_FILE.get(path, path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if BUILD_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
    check_worker_units(items)
    items.sort(key=_schedule_rank)


_UNIT_RANK = {unit: rank for rank, unit in enumerate(WORKER_UNITS)}


def _schedule_rank(item: pytest.Item) -> int:
    """The units in the order of WORKER_UNITS, then every other file (a stable sort)."""
    return _UNIT_RANK.get(_unit_of(item.nodeid), len(WORKER_UNITS))


def check_worker_units(items: list[pytest.Item]) -> None:
    """Every warehouse-building fixture used by more than one file is used within one unit."""
    files_of: dict[str, set[str]] = {}
    for item in items:
        for fixture in BUILD_FIXTURES & set(getattr(item, "fixturenames", ())):
            files_of.setdefault(fixture, set()).add(item.nodeid.split("::")[0])
    for fixture, files in sorted(files_of.items()):
        if len({_unit_of(path) for path in files}) > 1:
            raise pytest.UsageError(
                f"{', '.join(sorted(files))} share the session fixture {fixture} but not a unit of "
                "WORKER_UNITS (tests/plugins/worker_units.py): put them in one, so that "
                "`make test` builds that warehouse once"
            )


# `optionalhook`: a run without pytest-xdist (`-p no:xdist`) does not know this hook.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`--dist loadfile`, with the files of each unit of WORKER_UNITS scheduled as one."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit_of(nodeid)

        def remove_node(self, node):
            """A crashed worker's unit goes back to the queue without the test it crashed in.

            xdist reports that test as failed ("worker crashed while running ...") but its
            LoadScopeScheduling puts it back, still pending, with the rest of its unit, so the
            replacement worker ran it first and crashed or hung on it again and never reached the
            unit's other tests (issue 37, point 8). Here it is marked done before the unit is
            queued again: it runs once, the rest of its unit runs on the next worker to take it.
            Otherwise as LoadScopeScheduling.remove_node: the crashed test's id, or None when the
            worker had nothing left to run."""
            workload = self.assigned_work.pop(node)
            pending = [
                nodeid for unit in workload.values() for nodeid, done in unit.items() if not done
            ]
            if not pending:
                return None
            crashed = pending[0]
            workload[self._split_scope(crashed)][crashed] = True
            self.workqueue.update(
                (scope, unit) for scope, unit in workload.items() if not all(unit.values())
            )
            for other in self.assigned_work:
                self._reschedule(other)
            return crashed

    # Keep the collection's order (the units first) instead of xdist's largest-scope-first.
    config.option.loadscopereorder = False
    return UnitScheduling(config, log)
