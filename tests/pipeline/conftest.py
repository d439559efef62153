"""The ledger warehouse: simulated traffic plus hand-made sessions, built once per test session
(tests/pipeline/test_ledger_dbt.py, test_publish.py, test_spark.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from tests.support.homes import (
    LEDGER_PROVIDER_BILL,
    LEDGER_SIMULATION,
    LedgerWarehouse,
    build_home,
    dbt_run_results,
    ledger_hand_made_events,
)


@pytest.fixture(scope="session")
def ledger_built_warehouse(tmp_path_factory: pytest.TempPathFactory) -> LedgerWarehouse:
    """Simulated traffic plus the hand-made sessions, built and published by the job."""
    settings = build_home(
        tmp_path_factory.mktemp("ledger"),
        simulation={"bad_row_share": 0.0, "duplicate_share": 0.0, **LEDGER_SIMULATION},
        raw_rows=ledger_hand_made_events(),
        provider_bills=(LEDGER_PROVIDER_BILL,),
    )
    return LedgerWarehouse(settings, dbt_run_results(settings))


@pytest.fixture
def ledger_query(ledger_built_warehouse: LedgerWarehouse) -> Callable[..., list[dict]]:
    """Run SQL read-only on the built warehouse; rows as dicts."""

    def query(sql: str, params: list | None = None) -> list[dict]:
        path = ledger_built_warehouse.settings.warehouse_path
        with duckdb.connect(str(path), read_only=True) as con:
            cursor = con.execute(sql, params or [])
            names = [column[0] for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    return query


@pytest.fixture(scope="session")
def ledger_warehouse_path(ledger_built_warehouse: LedgerWarehouse) -> Path:
    return ledger_built_warehouse.settings.warehouse_path
