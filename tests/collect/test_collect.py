"""Collectors (SPEC 9): real LiveKit and Pipecat sessions, Vapi and Retell webhooks, the sinks.

One landing folder receives what every stack emits (through the file sink); it is ingested and
priced once (`collect_warehouse`), and each test checks its stack's events and session costs.
Expected costs come from the fakes' figures (tests/collect_stacks.py) and the shipped rate card:
deepseek-chat after 2026-11-16 costs 1.60 / 0.50 / 6.00 CNY per million input / cached / output
tokens, cosyvoice-v2 2.00 CNY per 10,000 characters, paraformer-realtime-v2 0.0144 CNY a minute.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pytest

from ledger.collect.event_builder import decimal_text, stable_id
from ledger.collect.livekit import LiveKitCollector
from ledger.collect.retell import RetellOptions, events_from_webhook, product_service
from ledger.collect.sink import FileSink
from ledger.collect.vapi import PayloadError, VapiOptions, events_from_report
from ledger.contract.events import EVENT_ADAPTER
from ledger.core.settings import REPO_ROOT, Settings
from tests.support.stacks import (
    CALL_START,
    cost_rule_events,
    retell_webhook,
    run_livekit_session,
    run_pipecat_pipeline,
    vapi_report,
)

USD_2026_11_20 = Decimal("7.2250")
FIXTURES = Path(__file__).parents[1] / "fixtures" / "webhooks"
VAPI = VapiOptions(source="vapi", tenant_id="nova-retail")
RETELL = RetellOptions(source="retell", tenant_id="nova-retail")


def line(quantity: str | int, price: str, per: int, fx: Decimal = Decimal(1)) -> Decimal:
    """One priced meter as the dbt models compute it (README: 'Money is exact')."""
    unit = (Decimal(price) / Decimal(per)).quantize(Decimal("1E-20"), ROUND_HALF_EVEN)
    unit_fx = (unit * fx).quantize(Decimal("1E-20"), ROUND_HALF_UP)
    return (Decimal(quantity) * unit_fx).quantize(Decimal("1E-12"), ROUND_HALF_UP)


DEEPSEEK_TURN = line(200, "1.60", 10**6) + line(1000, "0.50", 10**6) + line(50, "6.00", 10**6)
COSYVOICE_REPLY = line(12, "2.00", 10_000)


def _read_events(folder: Path) -> list[dict]:
    return [
        json.loads(text)
        for path in sorted(folder.glob("*.jsonl"))
        for text in path.read_text().splitlines()
    ]


@dataclass(frozen=True)
class CollectRun:
    settings: Settings
    events: dict[str, list[dict]]  # per stack, as written to the landing folder
    results: list  # the ingest's FileResults
    late_results: list  # a later ingest: Retell's call_analyzed of retell-call-2


@pytest.fixture(scope="session")
def collect_run(tmp_path_factory: pytest.TempPathFactory) -> CollectRun:
    """Every stack into one landing folder through FileSinks; ingested; `dbt run` of the ledger."""
    from dagster_project.defs.ledger_dbt import run_dbt
    from ledger.ingest import ingest_paths
    from ledger.pipeline.transform import prepare_reference
    from ledger.warehouse import connect

    root = tmp_path_factory.mktemp("collect")
    settings = Settings(home=root / "home", reference_dir=REPO_ROOT / "data" / "reference")
    landing = settings.landing_dir
    events: dict[str, list[dict]] = {}
    for stack, run, tenant in (
        ("livekit", run_livekit_session, "nova-retail"),
        ("pipecat", run_pipecat_pipeline, "kiddo-toys"),
    ):
        sink = FileSink(landing / stack, prefix=stack)
        run(sink, f"{stack}-session-1", tenant)
        sink.close()
        events[stack] = _read_events(landing / stack)
    for stack, converted in (
        ("vapi", events_from_report(vapi_report("vapi-call-1", "acme-telecom"), VAPI)),
        ("retell", events_from_webhook(retell_webhook("retell-call-1", "bright-bank"), RETELL)),
        ("rules", cost_rule_events("rules-1", "acme-telecom")),
        (
            "documented",  # payloads written from the platforms' documented fields
            events_from_report(_webhook("vapi_end_of_call_report"), VAPI)
            + events_from_webhook(_webhook("retell_call_ended"), RETELL),
        ),
    ):
        sink = FileSink(landing / stack, prefix=stack)
        for event in converted:
            sink.emit(event)
        sink.close()
        events[stack] = _read_events(landing / stack)
    results = ingest_paths(settings, [landing])
    # Retell's call_analyzed comes later, with the call's final (higher) cost.
    late = FileSink(root / "late", prefix="retell")
    for event in events_from_webhook(_webhook("retell_call_analyzed"), RETELL):
        late.emit(event)
    late.close()
    late_results = ingest_paths(settings, [root / "late"])
    with connect(settings.warehouse_path) as con:
        prepare_reference(settings, con)
    run_dbt(settings, ["run", "--select", "+fct_session_ledger"])
    return CollectRun(settings, events, results, late_results)


def _webhook(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def _session(run: CollectRun, session_id: str) -> dict:
    with duckdb.connect(str(run.settings.warehouse_path), read_only=True) as con:
        cursor = con.execute(
            "select * from marts.fct_session_ledger where session_id = ?", [session_id]
        )
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    assert len(rows) == 1, session_id
    return dict(zip(names, rows[0], strict=True))


def _fields(event: dict) -> dict:
    common = {"event_id", "source", "tenant_id", "session_id", "occurred_at"}
    return {k: v for k, v in event.items() if k not in common}


def test_every_collected_event_passes_the_contract_and_ingests_without_quarantine(collect_run):
    for stack, events in collect_run.events.items():
        for event in events:
            EVENT_ADAPTER.validate_python(event)  # raises on any contract violation
        assert len({e["event_id"] for e in events}) == len(events), stack
    assert sum(r.quarantined for r in collect_run.results) == 0
    assert sum(r.accepted for r in collect_run.results) == sum(
        len(events) for events in collect_run.events.values()
    )
    # Files appear only under their final names: the sink's open file is hidden until closed.
    assert not list(collect_run.settings.landing_dir.rglob(".*"))


def test_livekit_session_becomes_exclusive_usage_per_request_latency_and_its_end(collect_run):
    events = collect_run.events["livekit"]
    kinds = [e["event_type"] for e in events]
    assert kinds.count("llm.usage") == 2 and kinds.count("tts.usage") == 2
    assert (kinds[0], kinds[-1]) == ("session.started", "session.ended")
    llm = [_fields(e) for e in events if e["event_type"] == "llm.usage"]
    # LiveKit's 1,200 prompt tokens include the 1,000 cached: the contract's 200 do not.
    assert llm == [
        {
            "event_type": "llm.usage",
            "provider": "deepseek",
            "model": "deepseek-chat",
            "turn_index": turn,
            "input_tokens": 200,
            "cached_input_tokens": 1000,
            "output_tokens": 50,
        }
        for turn in (0, 1)
    ]
    asr = [_fields(e) for e in events if e["event_type"] == "asr.usage"]
    assert asr == [
        {
            "event_type": "asr.usage",
            "provider": "aliyun",
            "model": "paraformer-realtime-v2",
            "audio_seconds": "2",
        }
    ]
    assert [e["segment"] for e in events if e["event_type"] == "turn.latency"] == [
        "llm_ttft",
        "tts_first_frame",
        "llm_ttft",
        "tts_first_frame",
    ]
    interrupted = [_fields(e) for e in events if e["event_type"] == "turn.interrupted"]
    assert [(i["turn_index"], i["is_false_interruption"]) for i in interrupted] == [(1, True)]
    assert events[-1]["end_reason"] == "agent_hangup"


def test_livekit_session_prices_to_the_fakes_usage(collect_run):
    row = _session(collect_run, "livekit-session-1")
    assert row["llm_cost"] == 2 * DEEPSEEK_TURN == Decimal("0.00224")
    assert row["tts_cost"] == 2 * COSYVOICE_REPLY == Decimal("0.0048")
    assert row["asr_cost"] == line(2, "0.0144", 60) == Decimal("0.00048")
    assert row["total_cost"] == Decimal("0.00752")
    assert [row[f"{c}_cost_source"] for c in ("asr", "llm", "tts", "realtime", "infra")] == [
        "usage",
        "usage",
        "usage",
        None,
        None,
    ]
    assert (row["turn_count"], row["false_interruption_count"]) == (2, 1)
    assert row["has_unpriced_usage"] is False
    assert row["end_reason"] == "agent_hangup"


def test_pipecat_pipeline_becomes_usage_latency_and_the_interruption(collect_run):
    events = collect_run.events["pipecat"]
    llm = [_fields(e) for e in events if e["event_type"] == "llm.usage"]
    # OpenAI-style usage is gross of the cache: 1,250 total - 50 output - 1,000 cached = 200.
    assert [(e["input_tokens"], e["cached_input_tokens"], e["output_tokens"]) for e in llm] == [
        (200, 1000, 50),
        (200, 1000, 50),
    ]
    assert [
        (e["turn_index"], e["characters"]) for e in events if e["event_type"] == "tts.usage"
    ] == [
        (0, 12),
        (1, 12),
    ]
    assert [
        (e["turn_index"], e["segment"]) for e in events if e["event_type"] == "turn.latency"
    ] == [(0, "stt_final"), (0, "llm_ttft"), (1, "stt_final"), (1, "llm_ttft")]
    interrupted = [_fields(e) for e in events if e["event_type"] == "turn.interrupted"]
    # The caller cut the second reply short: the interrupted turn is the bot's, not the new one.
    assert [(i["turn_index"], i["is_false_interruption"]) for i in interrupted] == [(1, False)]


def test_pipecat_pipeline_prices_to_the_fakes_usage(collect_run):
    row = _session(collect_run, "pipecat-session-1")
    assert row["llm_cost"] == 2 * DEEPSEEK_TURN
    assert row["tts_cost"] == 2 * COSYVOICE_REPLY
    assert row["asr_cost"] == 2 * line("3.5", "0.0144", 60) == Decimal("0.00168")
    assert row["total_cost"] == Decimal("0.00872")
    assert (row["turn_count"], row["interruption_count"]) == (2, 1)


def test_vapi_report_becomes_the_session_its_usage_and_its_reported_costs():
    events = events_from_report(vapi_report("vapi-call-1", "acme-telecom"), VAPI)
    by_type = {}
    for event in events:
        by_type.setdefault(event["event_type"], []).append(_fields(event))
    assert by_type["session.started"] == [
        {
            "event_type": "session.started",
            "scenario": "other",
            "channel": "pstn",
            "pipeline": "cascade",
            "agent_id": "asst-1",
        }
    ]
    assert by_type["session.ended"][0]["end_reason"] == "user_hangup"
    assert events[1]["occurred_at"] == "2026-11-20T02:02:30.000Z"
    assert by_type["asr.usage"][0]["audio_seconds"] == "150"
    assert [
        (u["input_tokens"], u["cached_input_tokens"], u["output_tokens"])
        for u in by_type["llm.usage"]
    ] == [(10000, 20000, 1500)]
    assert by_type["tts.usage"][0]["characters"] == 1200
    assert by_type["infra.usage"][0] | {} == {
        "event_type": "infra.usage",
        "provider": "twilio",
        "resource": "pstn",
        "quantity": "2.5",
        "unit": "path_minutes",
    }
    assert [
        (c["component"], c["provider"], c["amount"], c["currency"], c["item"])
        for c in by_type["cost.reported"]
    ] == [
        ("asr", "deepgram", "0.0193", "USD", "transcriber"),
        ("llm", "openai", "0.0084", "USD", "model"),
        ("tts", "elevenlabs", "0.078", "USD", "voice"),
        ("infra", "twilio", "0.0215", "USD", "transport"),
        ("infra", "vapi", "0.125", "USD", "vapi.normal"),
    ]
    assert all(e["tenant_id"] == "acme-telecom" for e in events)


def test_vapi_report_prices_its_usage_at_the_rate_card(collect_run):
    row = _session(collect_run, "vapi-call-1")
    fx = USD_2026_11_20
    assert row["asr_cost"] == line(150, "0.0077", 60, fx)
    assert row["llm_cost"] == (
        line(10000, "0.40", 10**6, fx)
        + line(20000, "0.10", 10**6, fx)
        + line(1500, "1.60", 10**6, fx)
    )
    assert row["tts_cost"] == line(1200, "0.05", 1000, fx) == Decimal("0.4335")
    assert row["duration_seconds"] == 150
    assert row["revenue"] == Decimal("1.80")  # acme-telecom: 3 started minutes x 0.60
    assert (row["asr_cost_source"], row["llm_cost_source"], row["tts_cost_source"]) == (
        "usage",
        "usage",
        "usage",
    )


def test_vapi_transport_and_platform_fee_are_priced_from_the_reported_costs(collect_run):
    # twilio has no rate: its usage is unpriced, so the reported 0.0215 USD stands in (SPEC 9);
    # Vapi's own 0.125 USD has no usage at all: a platform fee, cost of infra.
    row = _session(collect_run, "vapi-call-1")
    fx = USD_2026_11_20
    assert row["infra_cost"] == Decimal("0.0215") * fx + Decimal("0.125") * fx
    assert row["infra_cost"] == Decimal("1.0584625")
    assert (row["infra_cost_source"], row["has_unpriced_usage"]) == ("reported", False)


def test_retell_costs_in_cents_become_reported_costs_in_units():
    events = events_from_webhook(retell_webhook("retell-call-1", "bright-bank"), RETELL)
    reported = [
        (e["component"], e["provider"], e.get("model"), e["amount"], e["item"])
        for e in events
        if e["event_type"] == "cost.reported"
    ]
    assert reported == [
        ("tts", "elevenlabs", None, "0.105", "elevenlabs_tts"),
        ("llm", "openai", "gpt_4o_mini", "0.0075", "gpt_4o_mini"),
        ("infra", "retell", None, "0.015", "retell_platform"),
    ]
    started, ended = events[0], events[1]
    assert (started["occurred_at"], ended["occurred_at"]) == (
        "2026-11-20T02:00:00.000Z",
        "2026-11-20T02:01:30.000Z",
    )
    assert ended["end_reason"] == "agent_hangup"


def test_retell_call_analyzed_repeats_call_ended_under_the_same_event_ids():
    ended = events_from_webhook(retell_webhook("c-1", "bright-bank", "call_ended"), RETELL)
    analyzed = events_from_webhook(retell_webhook("c-1", "bright-bank", "call_analyzed"), RETELL)
    assert ended == analyzed
    assert events_from_webhook(retell_webhook("c-1", "t", "call_started"), RETELL) == []


def test_retell_session_is_priced_from_its_reported_costs(collect_run):
    row = _session(collect_run, "retell-call-1")
    assert (row["tenant_id"], row["duration_seconds"], row["end_reason"]) == (
        "bright-bank",
        90,
        "agent_hangup",
    )
    fx = USD_2026_11_20
    assert row["tts_cost"] == Decimal("0.105") * fx == Decimal("0.758625")
    assert row["llm_cost"] == Decimal("0.0075") * fx
    assert row["infra_cost"] == Decimal("0.015") * fx
    assert row["total_cost"] == Decimal("0.1275") * fx
    assert [row[f"{c}_cost_source"] for c in ("asr", "llm", "tts", "infra")] == [
        None,
        "reported",
        "reported",
        "reported",
    ]


def test_cost_source_rule_per_component_and_provider(collect_run):
    row = _session(collect_run, "rules-1")
    assert (row["llm_cost"], row["llm_cost_source"]) == (line(1000, "1.60", 10**6), "usage")
    assert (row["asr_cost"], row["asr_cost_source"]) == (
        line(60, "0.0144", 60) + Decimal("0.02"),
        "mixed",
    )
    assert (row["tts_cost"], row["tts_cost_source"]) == (0, "unpriced")
    assert (row["unpriced_usage_event_count"], row["has_unpriced_usage"]) == (1, True)
    assert row["total_cost"] == Decimal("0.0016") + Decimal("0.0344")


def test_reported_costs_staging_keeps_every_column_issue_15_reads(collect_run):
    with duckdb.connect(str(collect_run.settings.warehouse_path), read_only=True) as con:
        cursor = con.execute(
            "select * from staging.stg_metering__reported_costs where session_id = 'rules-1'"
        )
        columns = [(d[0], str(d[1])) for d in cursor.description]
        rows = cursor.fetchall()
    assert [name for name, _ in columns] == [
        "event_id",
        "source",
        "tenant_id",
        "session_id",
        "occurred_at",
        "provider",
        "component",
        "model",
        "turn_index",
        "item",
        "amount",
        "currency",
        "file_id",
        "line_number",
    ]
    assert dict(columns)["amount"] == "DECIMAL(38,12)"
    assert sorted(r[10] for r in rows) == [Decimal("0.02"), Decimal("0.5")]


def test_a_report_sent_again_deduplicates_at_ingest(collect_run, tmp_path):
    from ledger.ingest import ingest_paths
    from ledger.warehouse import copy_warehouse

    again = events_from_report(vapi_report("vapi-call-1", "acme-telecom"), VAPI)
    path = tmp_path / "vapi-again.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in again))
    settings = Settings(home=tmp_path / "home", reference_dir=collect_run.settings.reference_dir)
    settings.home.mkdir()
    copy_warehouse(collect_run.settings.warehouse_path, settings.warehouse_path)
    (result,) = ingest_paths(settings, [path])
    assert (result.accepted, result.duplicates, result.quarantined) == (0, len(again), 0)


def test_product_names_map_to_components_and_configuration_overrides_them():
    assert product_service("deepgram_stt", RETELL) == ("asr", "deepgram", None)
    assert product_service("claude_3_5_haiku", RETELL)[:2] == ("llm", "anthropic")
    assert product_service("twilio_telephony", RETELL) == ("infra", "twilio", None)
    custom = RetellOptions("retell", "t", products={"retell_platform": ("infra", "retell", "v2")})
    assert product_service("retell_platform", custom) == ("infra", "retell", "v2")


def test_webhook_payloads_missing_what_the_ledger_needs_are_refused_by_name():
    with pytest.raises(PayloadError, match="message.call.id"):
        events_from_report({"message": {"type": "end-of-call-report", "call": {}}}, VAPI)
    with pytest.raises(PayloadError, match="call.start_timestamp"):
        events_from_webhook({"event": "call_ended", "call": {"call_id": "x"}}, RETELL)
    assert events_from_report({"message": {"type": "status-update"}}, VAPI) == []


def test_amounts_keep_six_places_rounded_half_even_and_ids_are_stable():
    assert decimal_text(0.019999999999999997) == "0.02"
    assert decimal_text("0.0000005") == "0"
    assert decimal_text("0.0000015") == "0.000002"
    assert decimal_text(Decimal("12.50")) == "12.5"
    assert stable_id("a", 1) == stable_id("a", 1) != stable_id("a", 2)


def test_livekit_end_of_utterance_splits_into_stt_final_then_endpointing():
    from livekit.agents.metrics import EOUMetrics

    class Sink:
        events: list[dict] = []

        def emit(self, event: dict) -> None:
            self.events.append(event)

    collector = LiveKitCollector(Sink(), tenant_id="t", session_id="s", clock=lambda: 0.0)
    eou = EOUMetrics(
        timestamp=CALL_START.timestamp() + 0.5,
        end_of_utterance_delay=0.5,
        transcription_delay=0.2,
        on_user_turn_completed_delay=0.0,
        speech_id="speech-a",
    )
    collector.on_metrics(eou)
    collector.on_metrics(eou)  # a re-delivered metric adds nothing
    assert [(e["segment"], e["started_at"], e["ended_at"]) for e in Sink.events] == [
        ("stt_final", "2026-11-20T02:00:00.000Z", "2026-11-20T02:00:00.200Z"),
        ("endpointing", "2026-11-20T02:00:00.200Z", "2026-11-20T02:00:00.500Z"),
    ]


def test_file_sink_rotates_hides_open_files_and_loses_nothing_on_close(tmp_path):
    sink = FileSink(tmp_path, prefix="t", max_events=3)
    for number in range(7):
        sink.emit({"n": number})
    # Two full files are closed; the third is open under a hidden name the ingest skips.
    assert len(list(tmp_path.glob("*.jsonl"))) == 2
    assert len(list(tmp_path.glob(".*.open"))) == 1
    sink.close()
    files = sorted(tmp_path.glob("*.jsonl"))
    assert [len(p.read_text().splitlines()) for p in files] == [3, 3, 1]
    assert [json.loads(t)["n"] for p in files for t in p.read_text().splitlines()] == list(range(7))
    assert not list(tmp_path.glob(".*"))


def test_timestamps_are_rfc3339_utc_with_milliseconds():
    from ledger.collect.event_builder import timestamp_text

    assert timestamp_text(datetime(2026, 11, 20, 2, 0, 0)) == "2026-11-20T02:00:00.000Z"


def test_every_cost_line_of_a_documented_vapi_report_is_accounted_for():
    report = _webhook("vapi_end_of_call_report")
    events = events_from_report(report, VAPI)
    reported = [e for e in events if e["event_type"] == "cost.reported"]
    # One reported cost per line, summing to the call's cost.
    assert len(reported) == len(report["message"]["costs"]) == 10
    assert sum(Decimal(e["amount"]) for e in reported) == Decimal("0.130878")
    assert [(e["component"], e["provider"], e.get("model"), e["item"]) for e in reported] == [
        ("infra", "vonage", "transport", "transport"),
        ("asr", "deepgram", "nova-3", "transcriber"),
        ("llm", "openai", "gpt-4.1-mini", "model"),
        ("tts", "11labs", "eleven_flash_v2_5", "voice"),
        ("infra", "vapi", "normal", "vapi.normal"),
        ("llm", "openai", "gpt-4.1-mini", "analysis.summary"),
        ("llm", "openai", "gpt-4.1-mini", "analysis.structuredData"),
        ("llm", "anthropic", "claude-3-5-haiku-20241022", "analysis.successEvaluation"),
        ("llm", "google", "gemini-1.5-flash", "knowledge-base"),
        ("realtime", "openai", "gpt-4o-audio-preview", "voicemail-detection"),
    ]
    # The analysis, knowledge-base and voicemail-detection lines carry their tokens as usage.
    llm = [
        (e["provider"], e["model"], e["input_tokens"], e["cached_input_tokens"], e["output_tokens"])
        for e in events
        if e["event_type"] == "llm.usage"
    ]
    assert llm == [
        ("openai", "gpt-4.1-mini", 8000, 4000, 800),
        ("openai", "gpt-4.1-mini", 1500, 0, 200),
        ("openai", "gpt-4.1-mini", 1600, 0, 120),
        ("anthropic", "claude-3-5-haiku-20241022", 1400, 0, 10),
        ("google", "gemini-1.5-flash", 900, 0, 60),
    ]
    [realtime] = [_fields(e) for e in events if e["event_type"] == "realtime.usage"]
    assert realtime == {
        "event_type": "realtime.usage",
        "provider": "openai",
        "model": "gpt-4o-audio-preview",
        "input_audio_tokens": 1200,
        "cached_input_audio_tokens": 0,
        "input_text_tokens": 300,
        "cached_input_text_tokens": 0,
        "output_audio_tokens": 0,
        "output_text_tokens": 5,
    }
    for event in events:
        EVENT_ADAPTER.validate_python(event)
    # Voicemail detection by the carrier (no tokens) is a fee of infra, with no usage.
    carrier = {"type": "voicemail-detection", "model": {}, "provider": "twilio", "cost": 0.0075}
    for name in ("promptTextTokens", "promptAudioTokens", "completionTextTokens"):
        carrier[name] = 0
    carrier["completionAudioTokens"] = 0
    report["message"]["costs"] = [carrier]
    only_fee = events_from_report(report, VAPI)
    assert [e["event_type"] for e in only_fee] == [
        "session.started",
        "session.ended",
        "cost.reported",
    ]
    fee = only_fee[2]
    assert (fee["event_type"], fee["component"], fee["provider"], fee["amount"]) == (
        "cost.reported",
        "infra",
        "twilio",
        "0.0075",
    )


def test_vapi_analysis_costs_count_in_the_ledger(collect_run):
    row = _session(collect_run, "vapi-call-2")
    fx = USD_2026_11_20
    # openai gpt-4.1-mini: the call's model and two analyses, all priced at the rate card; the
    # success evaluation (anthropic) and the knowledge base (google) are not: their reported
    # amounts stand in for their groups (SPEC 9), so llm is "mixed".
    priced = sum(
        line(inputs, "0.40", 10**6, fx)
        + line(cached, "0.10", 10**6, fx)
        + line(out, "1.60", 10**6, fx)
        for inputs, cached, out in ((8000, 4000, 800), (1500, 0, 200), (1600, 0, 120))
    )
    assert row["llm_cost"] == priced + (Decimal("0.00116") + Decimal("0.000086")) * fx
    assert row["llm_cost_source"] == "mixed"
    assert (row["realtime_cost"], row["realtime_cost_source"]) == (
        Decimal("0.0048") * fx,
        "reported",
    )


def test_retell_event_type_key_is_a_call_event():
    analyzed = _webhook("retell_call_analyzed")
    assert "event" not in analyzed and analyzed["event_type"] == "call_analyzed"
    events = events_from_webhook(analyzed, RETELL)
    assert [e["event_type"] for e in events] == ["session.started", "session.ended"] + [
        "cost.reported"
    ] * 3


def test_retell_call_analyzed_supersedes_call_ended_as_a_later_revision():
    ended = events_from_webhook(_webhook("retell_call_ended"), RETELL)
    analyzed = events_from_webhook(_webhook("retell_call_analyzed"), RETELL)
    assert ended[:2] == analyzed[:2]  # the session events deduplicate
    assert [(e["item"], e["amount"], e.get("revision")) for e in ended[2:]] == [
        ("elevenlabs_tts", "0.07", None),
        ("gpt_4o_mini", "0.005", None),
        ("retell_platform", "0.01", None),
    ]
    assert [(e["item"], e["amount"], e["revision"]) for e in analyzed[2:]] == [
        ("elevenlabs_tts", "0.07", 1),
        ("gpt_4o_mini", "0.0062", 1),
        ("retell_platform", "0.01", 1),
    ]
    # Their own ids: a changed amount is a new revision, never an id_conflict.
    assert not {e["event_id"] for e in ended[2:]} & {e["event_id"] for e in analyzed[2:]}


def test_retell_final_cost_supersedes_the_first_report_in_the_ledger(collect_run):
    [late] = collect_run.late_results
    assert (late.accepted, late.duplicates, late.quarantined) == (3, 2, 0)
    row = _session(collect_run, "retell-call-2")
    fx = USD_2026_11_20
    assert row["llm_cost"] == Decimal("0.0062") * fx  # not 0.005, nor both
    assert row["tts_cost"] == Decimal("0.07") * fx
    assert row["infra_cost"] == Decimal("0.01") * fx
    assert row["total_cost"] == Decimal("0.0862") * fx
