"""Experience, latency budget and capacity marts on a hand-made warehouse, with exact values.

One dbt build of every experience mart and its upstream models (unit and data tests included)
on a few sessions written straight into raw.events; the tests then read the marts. Quantiles were
checked against numpy.percentile(..., method="linear").
"""

import shutil
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import duckdb
import pytest
from dagster import AssetCheckSeverity, AssetKey, build_asset_check_context

from dagster_project.defs.experience_checks import (
    P95_FIRST_AUDIO_CHECK_NAME,
    build_experience_checks,
    first_audio_breaches,
)
from dagster_project.defs.ledger_dbt import run_dbt
from dagster_project.defs.resources import LedgerWarehouse
from ledger.core.settings import REPO_ROOT, Settings
from ledger.pipeline.transform import prepare_reference
from ledger.warehouse import append_events, connect, ensure_raw_schema

# Every test here reads the module's own small warehouse, built with dbt.
pytestmark = pytest.mark.integration

EXPERIENCE_MARTS = (
    "fct_turn_latency",
    "fct_latency_budget_tenant_daily",
    "fct_experience_tenant_daily",
    "fct_capacity_tenant_hourly",
)
DAY = date(2026, 11, 2)  # a Monday; 02:00Z is 10:00 in Asia/Shanghai, the same business date
SEGMENTS = ("endpointing", "stt_final", "llm_ttft", "tts_first_frame", "network_playback")


class Events:
    """raw.events rows for one test warehouse, every column the contract does not set NULL."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, event_type: str, tenant: str, session: str, at: datetime, **fields: Any) -> None:
        self.rows.append(
            {
                "event_type": event_type,
                "event_id": f"e{len(self.rows)}",
                "source": "test",
                "occurred_at": at,
                "tenant_id": tenant,
                "session_id": session,
                **fields,
            }
        )

    def turn(
        self, tenant: str, session: str, turn: int, start: datetime, durations: dict[str, int]
    ) -> None:
        """One turn.latency event per segment, back to back from `start`."""
        moment = start
        for segment in SEGMENTS:
            if segment not in durations:
                continue
            ended = moment + timedelta(milliseconds=durations[segment])
            self.add(
                "turn.latency",
                tenant,
                session,
                ended,
                turn_index=turn,
                segment=segment,
                started_at=moment,
                ended_at=ended,
            )
            moment = ended

    def insert(self, con: duckdb.DuckDBPyConnection) -> None:
        append_events(con, self.rows)


def at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(DAY.year, DAY.month, DAY.day, hour, minute, second)


def hand_made_events() -> Events:
    events = Events()
    # lumen-health overrides llm_ttft (200 ms) and first audio (450 ms) over the companion profile.
    events.add(
        "session.started",
        "lumen-health",
        "L1",
        at(2),
        scenario="companion",
        channel="webrtc",
        pipeline="cascade",
    )
    events.turn(
        "lumen-health",
        "L1",
        0,
        at(2, 0, 10),
        {
            "endpointing": 140,
            "stt_final": 70,
            "llm_ttft": 180,
            "tts_first_frame": 90,
            "network_playback": 20,
        },
    )
    # No network_playback measurement: no first audio for this turn.
    events.turn(
        "lumen-health",
        "L1",
        1,
        at(2, 1),
        {"endpointing": 100, "stt_final": 60, "llm_ttft": 250, "tts_first_frame": 70},
    )
    events.turn(
        "lumen-health",
        "L1",
        2,
        at(2, 2),
        {
            "endpointing": 150,
            "stt_final": 80,
            "llm_ttft": 210,
            "tts_first_frame": 80,
            "network_playback": 30,
        },
    )
    events.add(
        "llm.usage",
        "lumen-health",
        "L1",
        at(2, 0, 11),
        provider="qwen",
        model="qwen-turbo",
        turn_index=0,
        input_tokens=100,
        cached_input_tokens=300,
        output_tokens=50,
    )
    events.add(
        "tts.usage",
        "lumen-health",
        "L1",
        at(2, 0, 12),
        provider="aliyun",
        model="cosyvoice-v2",
        turn_index=0,
        characters=40,
        audio_seconds=Decimal("9.000000"),
        cache_hit=True,
    )
    events.add(
        "tts.usage",
        "lumen-health",
        "L1",
        at(2, 1, 2),
        provider="aliyun",
        model="cosyvoice-v2",
        turn_index=1,
        characters=60,
        audio_seconds=Decimal("13.000000"),
        cache_hit=False,
    )
    events.add(
        "turn.interrupted",
        "lumen-health",
        "L1",
        at(2, 1, 5),
        turn_index=1,
        wasted_output_tokens=10,
        wasted_tts_characters=20,
        is_false_interruption=True,
    )
    events.add(
        "turn.interrupted",
        "lumen-health",
        "L1",
        at(2, 2, 5),
        turn_index=2,
        wasted_output_tokens=0,
        wasted_tts_characters=0,
        is_false_interruption=False,
    )
    events.add("session.ended", "lumen-health", "L1", at(2, 10), end_reason="user_hangup")
    # L2 overlaps L1 from 02:05 to 02:10 and runs into the next hour (ends 03:02).
    events.add(
        "session.started",
        "lumen-health",
        "L2",
        at(2, 5),
        scenario="companion",
        channel="webrtc",
        pipeline="cascade",
    )
    events.add("session.degraded", "lumen-health", "L2", at(2, 6), kind="tts_filler")
    events.add("session.ended", "lumen-health", "L2", at(3, 2), end_reason="user_hangup")
    # acme-telecom: one customer_service turn well within the default 1000 ms profile.
    events.add(
        "session.started",
        "acme-telecom",
        "A1",
        at(3),
        scenario="customer_service",
        channel="pstn",
        pipeline="cascade",
    )
    events.turn(
        "acme-telecom",
        "A1",
        0,
        at(3, 0, 10),
        {
            "endpointing": 200,
            "stt_final": 100,
            "llm_ttft": 250,
            "tts_first_frame": 100,
            "network_playback": 50,
        },
    )
    events.add("session.ended", "acme-telecom", "A1", at(3, 5), end_reason="agent_hangup")
    return events


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    home = tmp_path_factory.mktemp("experience_home")
    settings = Settings(home=home, reference_dir=REPO_ROOT / "data" / "reference")
    with connect(settings.warehouse_path) as con:
        ensure_raw_schema(con)
        hand_made_events().insert(con)
        prepare_reference(settings, con)
    # cautious: tests of models outside the selection (other marts' relationships) stay out.
    selection = [f"+{mart}" for mart in EXPERIENCE_MARTS]
    run_dbt(settings, ["build", "--select", *selection, "--indirect-selection", "cautious"])
    yield settings
    shutil.rmtree(home, ignore_errors=True)


def query(settings: Settings, sql: str, *params: object) -> list[dict[str, Any]]:
    # Not read-only: in-process dbt-duckdb keeps its read-write instance of the file open, and
    # DuckDB refuses a second instance of one file with another configuration.
    with connect(settings.warehouse_path) as con:
        cursor = con.execute(sql, list(params))
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_a_turn_missing_a_segment_has_no_first_audio_but_keeps_its_other_segments(
    warehouse: Settings,
) -> None:
    rows = query(
        warehouse,
        "select turn_index, is_complete, llm_ttft_ms, network_playback_ms, first_audio_ms,"
        " llm_ttft_budget_ms, first_audio_budget_ms, budget_source, over_budget_segments,"
        " is_first_audio_over_budget"
        " from marts.fct_turn_latency where session_id = 'L1' order by turn_index",
    )
    assert rows == [
        {"turn_index": 0, "is_complete": True, "llm_ttft_ms": Decimal("180.000"),
         "network_playback_ms": Decimal("20.000"), "first_audio_ms": Decimal("500.000"),
         "llm_ttft_budget_ms": 200, "first_audio_budget_ms": 450,
         "budget_source": "tenant_override", "over_budget_segments": "tts_first_frame",
         "is_first_audio_over_budget": True},
        {"turn_index": 1, "is_complete": False, "llm_ttft_ms": Decimal("250.000"),
         "network_playback_ms": None, "first_audio_ms": None,
         "llm_ttft_budget_ms": 200, "first_audio_budget_ms": 450,
         "budget_source": "tenant_override", "over_budget_segments": "llm_ttft",
         "is_first_audio_over_budget": None},
        {"turn_index": 2, "is_complete": True, "llm_ttft_ms": Decimal("210.000"),
         "network_playback_ms": Decimal("30.000"), "first_audio_ms": Decimal("550.000"),
         "llm_ttft_budget_ms": 200, "first_audio_budget_ms": 450,
         "budget_source": "tenant_override", "over_budget_segments": "llm_ttft",
         "is_first_audio_over_budget": True},
    ]  # fmt: skip


def test_the_tenant_daily_budget_table_has_exact_quantiles_and_names_the_breach_owner(
    warehouse: Settings,
) -> None:
    rows = query(
        warehouse,
        "select segment, owner, budget_ms, turns, measured_turns, p50_ms, p95_ms,"
        " over_budget_share, p95_budget_ratio, is_worst_segment_at_p95, worst_segment_at_p95,"
        " breach_owner from marts.fct_latency_budget_tenant_daily"
        " where tenant_id = 'lumen-health' and business_date = ? order by segment_order",
        DAY,
    )
    quantiles = [
        (row["segment"], row["budget_ms"], row["turns"], row["measured_turns"], row["p50_ms"],
         row["p95_ms"], row["over_budget_share"], row["p95_budget_ratio"])
        for row in rows
    ]  # fmt: skip
    # numpy.percentile(method="linear") of the durations above, e.g. llm_ttft [180, 250, 210]:
    # P95 246; network_playback only has two turns; first audio [500, 550]: P95 547.5.
    assert quantiles == [
        ("endpointing", 150, 3, 3, 140.0, 149.0, 0.0, 0.993333),
        ("stt_final", 80, 3, 3, 70.0, 79.0, 0.0, 0.9875),
        ("llm_ttft", 200, 3, 3, 210.0, 246.0, 2 / 3, 1.23),
        ("tts_first_frame", 80, 3, 3, 80.0, 89.0, 1 / 3, 1.1125),
        ("network_playback", 30, 3, 2, 25.0, 29.5, 0.0, 0.983333),
        ("first_audio", 450, 3, 2, 525.0, 547.5, 1.0, 1.216667),
    ]
    # llm_ttft is 23% over its (overridden) budget at P95, tts_first_frame 11%: inference owns it.
    assert [row["owner"] for row in rows] == [
        "audio", "audio", "inference", "audio", "platform", None
    ]  # fmt: skip
    assert [row["is_worst_segment_at_p95"] for row in rows] == [
        False, False, True, False, False, False
    ]  # fmt: skip
    assert {(row["worst_segment_at_p95"], row["breach_owner"]) for row in rows} == {
        ("llm_ttft", "inference")
    }


def test_the_scenario_default_applies_without_an_override(warehouse: Settings) -> None:
    rows = query(
        warehouse,
        "select segment, budget_ms, p95_ms, is_p95_over_budget, breach_owner"
        " from marts.fct_latency_budget_tenant_daily where tenant_id = 'acme-telecom'"
        " and business_date = ? order by segment_order",
        DAY,
    )
    assert [tuple(row.values()) for row in rows] == [
        ("endpointing", 250, 200.0, False, None),
        ("stt_final", 150, 100.0, False, None),
        ("llm_ttft", 300, 250.0, False, None),
        ("tts_first_frame", 120, 100.0, False, None),
        ("network_playback", 60, 50.0, False, None),
        ("first_audio", 1000, 700.0, False, None),
    ]


def test_experience_rates_are_exact_and_null_without_a_denominator(warehouse: Settings) -> None:
    rows = query(
        warehouse,
        "select tenant_id, sessions, turns, interruption_rate, false_interruption_rate,"
        " prefix_cache_hit_rate, tts_phrase_cache_hit_rate, vision_cache_hit_rate,"
        " degradation_rate, degradation_rate_tts_filler, degradation_rate_asr_to_dtmf"
        " from marts.fct_experience_tenant_daily order by tenant_id",
    )
    assert [tuple(row.values()) for row in rows] == [
        ("acme-telecom", 1, 1, 0.0, None, None, None, None, 0.0, 0.0, 0.0),
        ("lumen-health", 2, 3, 2 / 3, 0.5, 0.75, 0.4, None, 0.5, 0.5, 0.0),
    ]


def test_concurrency_counts_overlaps_and_splits_sessions_at_the_hour(warehouse: Settings) -> None:
    rows = query(
        warehouse,
        "select pipeline, hour_start_at, local_hour, peak_concurrent_sessions,"
        " p95_concurrent_sessions, session_seconds from marts.fct_capacity_tenant_hourly"
        " where tenant_id = 'lumen-health' order by pipeline nulls first, hour_start_at",
    )
    # 02:00-02:05 one, 02:05-02:10 two, 02:10-03:00 one; 03:00-03:02 one, then idle: below
    # the 57 minutes of a P95 the level is 0. Every pipeline (NULL), then the cascade pipeline
    # alone: all of lumen-health's sessions are cascade sessions.
    assert [tuple(row.values()) for row in rows] == [
        (None, at(2), 10, 2, 2, Decimal("3900.000000")),
        (None, at(3), 11, 1, 0, Decimal("120.000000")),
        ("cascade", at(2), 10, 2, 2, Decimal("3900.000000")),
        ("cascade", at(3), 11, 1, 0, Decimal("120.000000")),
    ]


def test_the_first_audio_check_warns_about_tenant_days_over_their_total(
    warehouse: Settings,
) -> None:
    with connect(warehouse.warehouse_path) as con:
        breaches = first_audio_breaches(con)
    assert [(b.tenant_id, b.business_date, b.p95_ms, b.budget_ms) for b in breaches] == [
        ("lumen-health", DAY, 547.5, 450)
    ]

    (check,) = build_experience_checks(["marts", "fct_latency_budget_tenant_daily"])
    context = build_asset_check_context(
        resources={
            "warehouse": LedgerWarehouse(
                settings_json=Settings.from_env({"LEDGER_HOME": str(warehouse.home)}).as_json()
            )
        }
    )
    result = check(context)
    assert result.passed is False
    assert result.severity == AssetCheckSeverity.WARN
    assert result.metadata["breached_tenant_days"].value == 1
    assert result.metadata["breaches"].value == [
        {
            "tenant_id": "lumen-health",
            "business_date": "2026-11-02",
            "p95_first_audio_ms": 547.5,
            "budget_ms": 450,
            "p95_budget_ratio": 1.216667,
            "worst_segment_at_p95": "llm_ttft",
            "breach_owner": "inference",
        }
    ]
    spec = next(iter(check.check_specs))
    assert (spec.asset_key, spec.name) == (
        AssetKey(["marts", "fct_latency_budget_tenant_daily"]),
        P95_FIRST_AUDIO_CHECK_NAME,
    )


def test_every_experience_mart_was_built(warehouse: Settings) -> None:
    tables = {
        row["table_name"]
        for row in query(
            warehouse,
            "select table_name from information_schema.tables where table_schema = 'marts'",
        )
    }
    assert set(EXPERIENCE_MARTS) <= tables
