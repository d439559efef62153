"""Shared fixtures. Each area prefixes its fixtures (`ledger_...`); append, never rewrite."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from ledger.settings import REPO_ROOT, Settings

# ---- ledger (dbt models): one warehouse, built once per test session ------------------------------

LEDGER_REFERENCE_DIR = REPO_ROOT / "data" / "reference"
# Simulated traffic around the deepseek price change of 2026-11-16 (shared catalogue).
LEDGER_SIMULATION = {"tenants": 4, "days": 2, "start": date(2026, 11, 15), "sessions_per_day": 8}


def _ledger_event(event_type: str, session_id: str, occurred_at: str, **fields: Any) -> dict:
    return {
        "event_type": event_type,
        "session_id": session_id,
        "occurred_at": occurred_at,
        **fields,
    }


def ledger_hand_made_events() -> list[dict]:
    """Sessions whose ledger rows are worked out by hand in tests/test_ledger_dbt.py.

    The newest event of the warehouse is hand-open's last one (2026-11-17 03:00 UTC); the simulated
    traffic ends on 2026-11-16 16:00 UTC.
    """
    e = _ledger_event
    acme, bright, kiddo = "acme-telecom", "bright-bank", "kiddo-toys"
    lumen, nobody = "lumen-health", "tenant-06"
    llm = {"provider": "deepseek", "model": "deepseek-chat"}
    rows = [
        # deepseek-chat reprices at 2026-11-16 00:00 UTC, inside this session.
        e(
            "session.started",
            "hand-price-change",
            "2026-11-15 23:59:00",
            tenant_id=acme,
            scenario="customer_service",
            channel="pstn",
            pipeline="cascade",
        ),
        e(
            "llm.usage",
            "hand-price-change",
            "2026-11-15 23:59:30",
            tenant_id=acme,
            **llm,
            turn_index=0,
            input_tokens=1000,
            cached_input_tokens=500,
            output_tokens=200,
            phase="greeting",
            route="small",
        ),
        e(
            "llm.usage",
            "hand-price-change",
            "2026-11-16 00:00:30",
            tenant_id=acme,
            **llm,
            turn_index=1,
            input_tokens=1000,
            cached_input_tokens=500,
            output_tokens=200,
            phase="substantive",
            route="large",
        ),
        e(
            "turn.interrupted",
            "hand-price-change",
            "2026-11-16 00:00:40",
            tenant_id=acme,
            turn_index=2,
            wasted_output_tokens=100,
            wasted_tts_characters=0,
            is_false_interruption=True,
        ),
        e(
            "asr.usage",
            "hand-price-change",
            "2026-11-16 00:00:41",
            tenant_id=acme,
            provider="aliyun",
            model="paraformer-realtime-v2",
            audio_seconds="61.5",
        ),
        e(
            "infra.usage",
            "hand-price-change",
            "2026-11-16 00:00:42",
            tenant_id=acme,
            provider="telco",
            resource="pstn",
            quantity="1.5",
            unit="path_minutes",
        ),
        e(
            "session.ended",
            "hand-price-change",
            "2026-11-16 00:00:45",
            tenant_id=acme,
            end_reason="user_hangup",
        ),
        # A USD plan and USD rates; a TTS cache hit.
        e(
            "session.started",
            "hand-usd",
            "2026-11-16 10:00:00",
            tenant_id=lumen,
            scenario="companion",
            channel="webrtc",
            pipeline="cascade",
        ),
        e(
            "llm.usage",
            "hand-usd",
            "2026-11-16 10:00:05",
            tenant_id=lumen,
            provider="openai",
            model="gpt-4.1-mini",
            turn_index=0,
            input_tokens=1000,
            cached_input_tokens=1000,
            output_tokens=500,
        ),
        e(
            "tts.usage",
            "hand-usd",
            "2026-11-16 10:00:06",
            tenant_id=lumen,
            provider="elevenlabs",
            model="flash-v2.5",
            turn_index=0,
            characters=200,
            audio_seconds="4.5",
            cache_hit=True,
        ),
        e(
            "session.ended",
            "hand-usd",
            "2026-11-16 10:00:30.000001",
            tenant_id=lumen,
            end_reason="agent_hangup",
        ),
        # No session.started.
        e(
            "llm.usage",
            "hand-no-start",
            "2026-11-16 05:00:00",
            tenant_id=bright,
            provider="qwen",
            model="qwen-turbo",
            turn_index=0,
            input_tokens=100,
            cached_input_tokens=0,
            output_tokens=50,
        ),
        e(
            "session.ended",
            "hand-no-start",
            "2026-11-16 05:01:00",
            tenant_id=bright,
            end_reason="agent_hangup",
        ),
        # No session.ended, last event more than 2 hours before the newest event.
        e(
            "session.started",
            "hand-no-end",
            "2026-11-16 20:00:00",
            tenant_id=acme,
            scenario="customer_service",
            channel="pstn",
            pipeline="cascade",
        ),
        e(
            "asr.usage",
            "hand-no-end",
            "2026-11-16 20:10:00",
            tenant_id=acme,
            provider="aliyun",
            model="paraformer-realtime-v2",
            audio_seconds="10",
            turn_index=0,
        ),
        # Still open: its last event is the newest of the warehouse.
        e(
            "session.started",
            "hand-open",
            "2026-11-17 02:00:00",
            tenant_id=kiddo,
            scenario="hardware",
            channel="device",
            pipeline="realtime",
        ),
        e(
            "vision.usage",
            "hand-open",
            "2026-11-17 02:30:00",
            tenant_id=kiddo,
            provider="qwen",
            model="qwen-vl-plus",
            turn_index=0,
            images=2,
            image_tokens=512,
            cache_hit=True,
        ),
        e(
            "vision.usage",
            "hand-open",
            "2026-11-17 02:31:00",
            tenant_id=kiddo,
            provider="qwen",
            model="qwen-vl-plus",
            turn_index=1,
            images=1,
            image_tokens=256,
            cache_hit=False,
        ),
        e(
            "session.degraded",
            "hand-open",
            "2026-11-17 03:00:00",
            tenant_id=kiddo,
            kind="vision_clamp",
        ),
        # No price plan, a model not on the rate card, waste priced on unpriced usage.
        e(
            "session.started",
            "hand-unpriced",
            "2026-11-16 08:00:00",
            tenant_id=nobody,
            scenario="customer_service",
            channel="sip",
            pipeline="cascade",
        ),
        e(
            "llm.usage",
            "hand-unpriced",
            "2026-11-16 08:00:05",
            tenant_id=nobody,
            provider="acme-llm",
            model="x",
            turn_index=0,
            input_tokens=10,
            cached_input_tokens=0,
            output_tokens=5,
        ),
        e(
            "turn.interrupted",
            "hand-unpriced",
            "2026-11-16 08:00:10",
            tenant_id=nobody,
            turn_index=1,
            wasted_output_tokens=10,
            wasted_tts_characters=0,
            is_false_interruption=False,
        ),
        e(
            "session.ended",
            "hand-unpriced",
            "2026-11-16 08:01:00",
            tenant_id=nobody,
            end_reason="transfer",
        ),
        # Waste with no usage at all in the session.
        e(
            "session.started",
            "hand-no-usage-waste",
            "2026-11-16 09:00:00",
            tenant_id=acme,
            scenario="customer_service",
            channel="pstn",
            pipeline="cascade",
        ),
        e(
            "turn.interrupted",
            "hand-no-usage-waste",
            "2026-11-16 09:00:05",
            tenant_id=acme,
            turn_index=0,
            wasted_output_tokens=5,
            wasted_tts_characters=3,
            is_false_interruption=True,
        ),
        e(
            "session.ended",
            "hand-no-usage-waste",
            "2026-11-16 09:00:10",
            tenant_id=acme,
            end_reason="user_hangup",
        ),
    ]
    for number, row in enumerate(rows):
        row["event_id"] = f"hand-{number:03d}"
        row["source"] = "hand"
    return rows


def ledger_insert_events(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    """Insert contract-shaped rows straight into raw.events (naive UTC timestamps)."""
    for row in rows:
        names = list(row)
        con.execute(
            f"insert into raw.events ({', '.join(names)}) values ({', '.join('?' for _ in names)})",
            [row[name] for name in names],
        )


@dataclass(frozen=True)
class LedgerWarehouse:
    settings: Settings
    dbt_result: Any  # dbtRunnerResult of `dbt build`


@pytest.fixture(scope="session")
def ledger_built_warehouse(tmp_path_factory: pytest.TempPathFactory) -> LedgerWarehouse:
    """Simulated traffic (ingested) plus the hand-made sessions, reference data, `dbt build`."""
    from ledger.ingest import ingest_paths
    from ledger.simulate import simulate
    from ledger.transform import prepare_reference, run_dbt
    from ledger.warehouse import connect, ensure_raw_schema

    root = tmp_path_factory.mktemp("ledger")
    settings = Settings(home=root / "home", reference_dir=LEDGER_REFERENCE_DIR)
    landing = root / "landing"
    simulate(landing, bad_row_share=0.0, duplicate_share=0.0, **LEDGER_SIMULATION)
    # The simulated month lies in the future of some clocks: ingest as of after it.
    ingest_paths(settings, [landing], ingest_time=datetime(2027, 1, 1))
    with connect(settings.warehouse_path) as con:
        ensure_raw_schema(con)
        ledger_insert_events(con, ledger_hand_made_events())
        prepare_reference(settings, con)
    result = run_dbt(settings, ["build"])
    return LedgerWarehouse(settings, result)


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
