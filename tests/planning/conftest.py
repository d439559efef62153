"""Shadow mode, capacity, replay and what-if: one shadow-enabled week, built once per test session
(the boards fixture `boards_home` is in tests/conftest.py: the boards tests use it too)."""

from __future__ import annotations

from datetime import date

import pytest

from ledger.core.settings import Settings
from tests.support.homes import build_home

# Two tenants for the ISO week 2026-W45 with the simulator's shadow candidate `eou-v2`: better on
# acme-telecom, worse on bright-bank (ledger.simulate.shadow).
PLANNING_SIMULATION = {
    "tenants": 2,
    "days": 7,
    "start": date(2026, 11, 2),
    "sessions_per_day": 6,
    "shadow": True,
    "bad_row_share": 0.0,
    "duplicate_share": 0.0,
}


@pytest.fixture(scope="session")
def planning_home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A published copy of PLANNING_SIMULATION, built by the job; tests never change it."""
    return build_home(tmp_path_factory.mktemp("planning"), simulation=PLANNING_SIMULATION)
