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
    """Append contract-shaped rows straight to raw.events (naive UTC timestamps)."""
    from ledger.warehouse import append_events

    append_events(con, rows)


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


# ---- ops (alerts and weekly review): a month-like warehouse, built once per test session ---------

# Two tenants (acme-telecom, bright-bank) from 2026-11-01: bright-bank's LLM prefix cache breaks on
# 2026-11-20 and 2026-11-21, the last day of the data (so 2026-11-21 is not closed yet).
OPS_SIMULATION = {"tenants": 2, "days": 21, "start": date(2026, 11, 1), "seed": 7}


@pytest.fixture(scope="session")
def ops_template_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built warehouse (simulate, ingest, reference, dbt build); tests copy it, never change it."""
    from ledger.ingest import ingest_paths
    from ledger.simulate import simulate
    from ledger.transform import prepare_reference, run_dbt
    from ledger.warehouse import connect

    root = tmp_path_factory.mktemp("ops")
    settings = Settings(home=root / "home", reference_dir=LEDGER_REFERENCE_DIR)
    simulate(root / "landing", **OPS_SIMULATION)
    ingest_paths(settings, [root / "landing"], ingest_time=datetime(2027, 1, 1))
    with connect(settings.warehouse_path) as con:
        prepare_reference(settings, con)
    run_dbt(settings, ["build"])
    return settings.home


@pytest.fixture
def ops_settings(ops_template_home: Path, tmp_path: Path) -> Settings:
    """Settings of a private copy of the ops warehouse (alerts and reports write to it)."""

    from ledger.warehouse import copy_warehouse

    home = tmp_path / "home"
    home.mkdir()
    copy_warehouse(ops_template_home / "warehouse.duckdb", home / "warehouse.duckdb")
    return Settings(home=home, reference_dir=LEDGER_REFERENCE_DIR)


# ---- boards (Streamlit): a published copy of hand-made traffic, built once per test session ------
#
# Every figure the board tests assert is worked out by hand from these events, the shipped rate card
# and price plans (all times UTC; the business dates in Asia/Shanghai are the same dates):
#
# | session  | tenant       | date       | revenue                       | cost              |
# |----------|--------------|------------|-------------------------------|-------------------|
# | acme-s0  | acme-telecom | 2025-03-09 | 60 s -> 1 min x 0.60 = 0.60   | ASR 60 s = 0.0144 |
# | acme-s1  | acme-telecom | 2025-03-10 | 150 s -> 3 min x 0.60 = 1.80  | 0.6838 (below)    |
# | kiddo-s1 | kiddo-toys   | 2025-03-11 | 0.10 + 100 s x 0.90/60 = 1.60 | 0.125 (below)     |
#
# acme-s1: ASR 120 s x 0.0144/60 = 0.0288; deepseek-chat 100k input x 2.00/M = 0.20, 200k cached x
# 0.50/M = 0.10, 10k output x 8.00/M = 0.08 (LLM 0.38; the prefix cache saves 200k x 1.50/M = 0.30);
# cosyvoice 1000 chars x 2.00/10k = 0.20 and a 500-char cache hit (costs 0, saves 0.10); PSTN 2.5
# path-minutes x 0.03 = 0.075; an `acme-llm/x` call with no price (3 unpriced lines, not counted).
# One false interruption in turn 0 wastes 5000 output tokens (0.04) and 250 TTS chars (0.05) = 0.09.
# kiddo-s1: qwen-turbo 50k input x 0.30/M + 25k output x 0.60/M = 0.03; 10 images x 0.008 = 0.08 and
# a 4-image cache hit (saves 0.032); gpu_path 1.25 path-minutes x 0.012 = 0.015: total 0.125, which
# rounds half-even to 0.12 (half-up would show 0.13). One tts_filler degradation.
# Latency (ms, pipeline order) in BOARDS_LATENCY; acme is customer_service, kiddo hardware.

BOARDS_REFERENCE_DIR = REPO_ROOT / "data" / "reference"
BOARDS_SEGMENTS = ("endpointing", "stt_final", "llm_ttft", "tts_first_frame", "network_playback")
BOARDS_LATENCY = {
    "acme-s1": [(0, (200, 100, 400, 100, 50)), (1, (300, 120, 250, 110, 40))],
    "kiddo-s1": [(0, (100, 60, 200, 70, 20))],
}


def _boards_at(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def boards_fixture_events() -> list[dict]:
    """The contract events of the table above, in occurrence order."""
    from datetime import timedelta

    rows: list[dict] = []

    def add(event_type: str, session: str, tenant: str, moment: datetime, **fields: Any) -> None:
        rows.append(
            {
                "event_id": f"boards-{len(rows):03d}",
                "source": "boards-fixture",
                "event_type": event_type,
                "occurred_at": _boards_at(moment),
                "tenant_id": tenant,
                "session_id": session,
                **fields,
            }
        )

    acme, kiddo = "acme-telecom", "kiddo-toys"
    asr = {"provider": "aliyun", "model": "paraformer-realtime-v2"}
    tts = {"provider": "aliyun", "model": "cosyvoice-v2"}
    vision = {"provider": "qwen", "model": "qwen-vl-plus"}
    t0 = datetime(2025, 3, 9, 2, 0, 0)
    add("session.started", "acme-s0", acme, t0, scenario="customer_service", channel="pstn",
        pipeline="cascade")  # fmt: skip
    add("asr.usage", "acme-s0", acme, t0 + timedelta(seconds=30), **asr, audio_seconds="60")
    add("session.ended", "acme-s0", acme, t0 + timedelta(seconds=60), end_reason="user_hangup")

    t1 = datetime(2025, 3, 10, 2, 0, 0)
    add("session.started", "acme-s1", acme, t1, scenario="customer_service", channel="pstn",
        pipeline="cascade")  # fmt: skip
    add("asr.usage", "acme-s1", acme, t1 + timedelta(seconds=10), **asr, audio_seconds="120",
        turn_index=0)  # fmt: skip
    add("llm.usage", "acme-s1", acme, t1 + timedelta(seconds=11), provider="deepseek",
        model="deepseek-chat", turn_index=0, input_tokens=100000, cached_input_tokens=200000,
        output_tokens=10000, phase="substantive", route="large")  # fmt: skip
    add("tts.usage", "acme-s1", acme, t1 + timedelta(seconds=12), **tts, turn_index=0,
        characters=1000, audio_seconds="20.5")  # fmt: skip
    add("turn.interrupted", "acme-s1", acme, t1 + timedelta(seconds=20), turn_index=0,
        wasted_output_tokens=5000, wasted_tts_characters=250, is_false_interruption=True)  # fmt: skip
    add("llm.usage", "acme-s1", acme, t1 + timedelta(seconds=40), provider="acme-llm", model="x",
        turn_index=1, input_tokens=10, cached_input_tokens=10, output_tokens=5, phase="greeting",
        route="small")  # fmt: skip
    add("tts.usage", "acme-s1", acme, t1 + timedelta(seconds=41), **tts, turn_index=1,
        characters=500, audio_seconds="10", cache_hit=True)  # fmt: skip
    add("infra.usage", "acme-s1", acme, t1 + timedelta(seconds=149), provider="telco",
        resource="pstn", quantity="2.5", unit="path_minutes")  # fmt: skip
    add("session.ended", "acme-s1", acme, t1 + timedelta(seconds=150), end_reason="user_hangup")

    t2 = datetime(2025, 3, 11, 3, 0, 0)
    add("session.started", "kiddo-s1", kiddo, t2, scenario="hardware", channel="device",
        pipeline="cascade")  # fmt: skip
    add("llm.usage", "kiddo-s1", kiddo, t2 + timedelta(seconds=10), provider="qwen",
        model="qwen-turbo", turn_index=0, input_tokens=50000, cached_input_tokens=0,
        output_tokens=25000, phase="intake", route="small")  # fmt: skip
    add("vision.usage", "kiddo-s1", kiddo, t2 + timedelta(seconds=11), **vision, turn_index=0,
        images=10, image_tokens=2560)  # fmt: skip
    add("vision.usage", "kiddo-s1", kiddo, t2 + timedelta(seconds=12), **vision, turn_index=0,
        images=4, image_tokens=1024, cache_hit=True)  # fmt: skip
    add("session.degraded", "kiddo-s1", kiddo, t2 + timedelta(seconds=30), kind="tts_filler",
        reason="tts_timeout")  # fmt: skip
    add("infra.usage", "kiddo-s1", kiddo, t2 + timedelta(seconds=99), provider="in-house",
        resource="gpu_path", quantity="1.25", unit="path_minutes")  # fmt: skip
    add("session.ended", "kiddo-s1", kiddo, t2 + timedelta(seconds=100), end_reason="agent_hangup")

    starts = {"acme-s1": (acme, t1 + timedelta(seconds=5)), "kiddo-s1": (kiddo, t2)}
    for session, turns in BOARDS_LATENCY.items():
        tenant, base = starts[session]
        for turn, durations in turns:
            moment = base + timedelta(seconds=20 * turn + 1)
            for segment, duration in zip(BOARDS_SEGMENTS, durations, strict=True):
                ended = moment + timedelta(milliseconds=duration)
                add("turn.latency", session, tenant, ended, turn_index=turn, segment=segment,
                    started_at=_boards_at(moment), ended_at=_boards_at(ended))  # fmt: skip
                moment = ended
    return rows


def boards_write_landing(landing: Path) -> None:
    """The fixture events as one landing file, plus a file with two rows the ingest quarantines."""
    import json

    landing.mkdir(parents=True, exist_ok=True)
    events = boards_fixture_events()
    (landing / "boards-fixture.jsonl").write_text("\n".join(json.dumps(r) for r in events) + "\n")
    bad = [
        '{"event_id": "broken',
        json.dumps({**events[0], "event_id": "bad-1", "transcript": "hi"}),
    ]
    (landing / "boards-bad-rows.jsonl").write_text("\n".join(bad) + "\n")


@pytest.fixture(scope="session")
def boards_home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A published copy of the fixture traffic: ingest, reference data, `dbt run`, publish."""
    from ledger.ingest import ingest_paths
    from ledger.publish import publish
    from ledger.transform import prepare_reference, run_dbt
    from ledger.warehouse import connect

    root = tmp_path_factory.mktemp("boards")
    settings = Settings(home=root / "home", reference_dir=BOARDS_REFERENCE_DIR)
    boards_write_landing(root / "landing")
    ingest_paths(settings, [root / "landing"], ingest_time=datetime(2026, 1, 1))
    with connect(settings.warehouse_path) as con:
        prepare_reference(settings, con)
    run_dbt(settings, ["run"])
    publish(settings)
    return settings
