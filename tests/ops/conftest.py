"""Alerts and the weekly review: a month-like warehouse, built once per test session; tests copy it."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from ledger.core.settings import Settings
from tests.support.homes import LEDGER_REFERENCE_DIR, build_home

# Two tenants (acme-telecom, bright-bank) from 2026-11-01: bright-bank's LLM prefix cache breaks on
# 2026-11-20 and 2026-11-21, the last day of the data (so 2026-11-21 is not closed yet).
OPS_SIMULATION = {"tenants": 2, "days": 21, "start": date(2026, 11, 1), "seed": 7}


@pytest.fixture(scope="session")
def ops_template_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built and published home; tests copy it, never change it."""
    return build_home(tmp_path_factory.mktemp("ops"), simulation=OPS_SIMULATION).home


@pytest.fixture
def ops_settings(ops_template_home: Path, tmp_path: Path) -> Settings:
    """Settings of a private copy of the ops warehouse (alerts and reports write to it)."""
    from ledger.warehouse import copy_warehouse

    home = tmp_path / "home"
    home.mkdir()
    copy_warehouse(ops_template_home / "warehouse.duckdb", home / "warehouse.duckdb")
    shutil.copytree(ops_template_home / "published", home / "published")
    return Settings(home=home, reference_dir=LEDGER_REFERENCE_DIR)


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server (Debian's package) for the Dagster instance tests; each test
    creates its own database on it."""
    from tests.support.services import PostgresServer

    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()
