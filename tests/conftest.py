"""Fixtures of more than one area. An area's own fixtures live in its folder's conftest.py; helpers
in tests/support/. Each area prefixes its fixtures (`ledger_...`)."""

from __future__ import annotations

from datetime import datetime

import pytest

from ledger.core.settings import Settings
from tests.support.homes import BOARDS_REFERENCE_DIR, boards_write_landing, build_home

# The `integration` marker and `make test`'s pytest-xdist units of files.
pytest_plugins = ["tests.plugins.worker_units"]


# ---- boards (tests/boards/) and planning (tests/planning/) ---------------------------------------


@pytest.fixture(scope="session")
def boards_home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A published copy of the fixture traffic (worked out by hand in tests/support/homes.py),
    built by the job."""
    return build_home(
        tmp_path_factory.mktemp("boards"),
        reference_dir=BOARDS_REFERENCE_DIR,
        landing_files=boards_write_landing,
        ingest_time=datetime(2026, 1, 1),
    )
