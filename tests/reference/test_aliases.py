"""Names as real plugins report them (issue 25, SPEC 4): the shipped aliases and rate card price a
real stack's first session, and an alias added later re-prices and restates the sessions it
touches, and only those.

One build of four hand-made sessions on 2026-11-16 (USD at 7.2222 CNY that day):
- `real-stack`: the OpenAI plugin's endpoint host with gpt-4o-mini, Deepgram capitalised with
  Pipecat's default `nova-3-general`, and LiveKit Inference's `cartesia/sonic-3:<voice>`;
- `gateway`: gpt-4o-mini behind a host no alias knows yet (unpriced);
- `custom-asr`: a Deepgram model name no alias knows yet (unpriced);
- `untouched`: qwen-turbo, priced, carrying none of the names the edit adds;
- `eu-host`, `dated`, `punctuated`: names `ledger rates check` proposes alias rows for;
- `voices`: whisper-1 and ElevenLabs' eleven_turbo_v2_5, which `ledger rates import` prices from
  LiteLLM's price map.
Then `gw.acme.internal -> openai` and `deepgram nova-3-custom -> nova-3` are added and the next
build, with no new events, restates exactly `gateway` and `custom-asr`.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ledger.commands.build import run_build
from ledger.commands.cli import main
from ledger.core.settings import Settings
from ledger.finops.rates import check_rates, propose_rates
from ledger.warehouse import connect
from tests.support.homes import LEDGER_REFERENCE_DIR

pytestmark = pytest.mark.integration

TENANT = "acme-telecom"
DAY = "2026-11-16"
# 1000 input tokens at 0.15 USD and 500 output tokens at 0.60 USD per million, each unit price
# x 7.2222 (20 places) and x the quantity (12 places): 0.00108333 + 0.00216666.
GPT_4O_MINI = Decimal("0.00324999")
# 60 s at 0.0077 USD a minute: 0.00012833333333333333 x 7.2222 = 0.00092684899999999998 a second.
NOVA_3_MINUTE = Decimal("0.05561094")
# 1000 characters at 50 USD per million (sonic-3; eleven_turbo_v2_5 at 0.05 per 1000 the same):
# 0.00005 x 7.2222 x 1000.
SONIC_3 = Decimal("0.36111")
# 60 s at 0.006 USD a minute: 0.0001 x 7.2222 x 60.
WHISPER_MINUTE = Decimal("0.0433332")
# 1000 + 500 tokens at 0.30 and 0.60 CNY per million.
QWEN_TURBO = Decimal("0.0006")


def _session(session_id: str, *usage: dict) -> list[dict]:
    base = {"source": "alias-test", "tenant_id": TENANT, "session_id": session_id}
    events = [
        {**base, "event_id": f"{session_id}-start", "event_type": "session.started",
         "occurred_at": f"{DAY}T02:00:00Z", "scenario": "customer_service", "channel": "sip",
         "pipeline": "cascade"},
        {**base, "event_id": f"{session_id}-end", "event_type": "session.ended",
         "occurred_at": f"{DAY}T02:05:00Z", "end_reason": "user_hangup"},
    ]  # fmt: skip
    for index, line in enumerate(usage):
        events.append(
            {**base, "event_id": f"{session_id}-u{index}", "occurred_at": f"{DAY}T02:01:00Z",
             **line}
        )  # fmt: skip
    return events


def _llm(provider: str, model: str) -> dict:
    return {"event_type": "llm.usage", "provider": provider, "model": model, "turn_index": 0,
            "input_tokens": 1000, "cached_input_tokens": 0, "output_tokens": 500}  # fmt: skip


def _asr(provider: str, model: str) -> dict:
    return {"event_type": "asr.usage", "provider": provider, "model": model,
            "audio_seconds": "60", "turn_index": 0}  # fmt: skip


TTS = {"event_type": "tts.usage", "provider": "livekit", "model": "cartesia/sonic-3:a0e99841",
       "turn_index": 0, "characters": 1000, "audio_seconds": "60", "cache_hit": False}  # fmt: skip


def _ledger(settings: Settings) -> dict[str, tuple]:
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        rows = con.execute(
            "select session_id, asr_cost, llm_cost, tts_cost, total_cost, has_unpriced_usage "
            "from marts.fct_session_ledger order by session_id"
        ).fetchall()
    return {row[0]: row[1:] for row in rows}


def _build(settings: Settings) -> list[str]:
    outcome = run_build(settings)
    assert outcome.success, "\n".join(outcome.lines)
    return [line for line in outcome.lines if line.startswith("refresh:")]


def test_real_plugin_names_are_priced_and_an_added_alias_restates_what_it_touches(
    tmp_path: Path,
) -> None:
    reference = tmp_path / "reference"
    shutil.copytree(LEDGER_REFERENCE_DIR, reference)
    settings = Settings(home=tmp_path / "home", reference_dir=reference)
    settings.ensure_dirs()
    events = [
        *_session(
            "real-stack", _llm("api.openai.com", "gpt-4o-mini"), _asr("Deepgram", "nova-3-general"),
            TTS,
        ),
        *_session("gateway", _llm("gw.acme.internal", "gpt-4o-mini")),
        *_session("custom-asr", _asr("deepgram", "nova-3-custom")),
        *_session("untouched", _llm("qwen", "qwen-turbo")),
        # Unpriced names `ledger rates check` proposes aliases for.
        *_session("eu-host", _llm("eu.api.openai.com", "gpt-4o-mini-2024-07-18")),
        *_session("dated", _llm("openai", "gpt-4.1-2025-04-14")),
        *_session("punctuated", {**TTS, "provider": "Eleven-Labs", "model": "eleven_turbo_v2_5"}),
        # Voice models `ledger rates import` finds in LiteLLM's price map.
        *_session("voices", _asr("openai", "whisper-1"),
                  {**TTS, "provider": "ElevenLabs", "model": "eleven_turbo_v2_5"}),
    ]  # fmt: skip
    (settings.landing_dir / "1.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    _build(settings)
    zero = Decimal(0)
    assert _ledger(settings) == {
        "custom-asr": (zero, zero, zero, zero, True),
        "dated": (zero, zero, zero, zero, True),
        "eu-host": (zero, zero, zero, zero, True),
        "gateway": (zero, zero, zero, zero, True),
        "punctuated": (zero, zero, zero, zero, True),
        "real-stack": (
            NOVA_3_MINUTE, GPT_4O_MINI, SONIC_3, NOVA_3_MINUTE + GPT_4O_MINI + SONIC_3, False
        ),
        "untouched": (zero, QWEN_TURBO, zero, QWEN_TURBO, False),
        "voices": (WHISPER_MINUTE, zero, SONIC_3, WHISPER_MINUTE + SONIC_3, False),
    }  # fmt: skip
    with connect(settings.warehouse_path, read_only=True) as con:
        names = con.execute(
            "select distinct seen_provider, seen_model, provider, model "
            "from intermediate.int_usage_lines_priced where session_id = 'real-stack' order by 1"
        ).fetchall()
    assert names == [
        ("Deepgram", "nova-3-general", "deepgram", "nova-3"),
        ("api.openai.com", "gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("livekit", "cartesia/sonic-3:a0e99841", "cartesia", "sonic-3"),
    ]

    # `ledger rates import`: per-second ASR and per-character TTS prices from LiteLLM's map,
    # exactly as its JSON writes them, by the rate card's names; tokens from genai-prices.
    proposal = propose_rates(settings, effective_from=date(2026, 12, 1))
    rows = {
        (r.provider, r.model, r.meter): (r.price, r.per, r.currency, r.action, r.note)
        for r in proposal.rows
    }
    litellm = "LiteLLM 1.110.2 price map model"
    assert rows[("openai", "whisper-1", "asr.audio_seconds")] == (
        Decimal("0.0060"),
        Decimal(60),
        "USD",
        "unchanged",
        f"{litellm} whisper-1",
    )
    # Streamed ASR takes the map's streaming listing, Deepgram's published per-minute price: the
    # card's own (the pre-recorded 0.0043 is no price for a voice agent, issue 38 point 2).
    assert rows[("deepgram", "nova-3", "asr.audio_seconds")] == (
        Decimal("0.0077"),
        Decimal(60),
        "USD",
        "unchanged",
        f"{litellm} deepgram/streaming/nova-3 (streaming price); the provider's per-minute price",
    )
    assert rows[("elevenlabs", "eleven_turbo_v2_5", "tts.characters")] == (
        Decimal("40"), Decimal(1000000), "USD", "change",
        f"{litellm} elevenlabs/eleven_turbo_v2_5",
    )  # fmt: skip
    assert rows[("openai", "gpt-4o-mini", "llm.output_tokens")][:4] == (
        Decimal("0.6"),
        Decimal(1000000),
        "USD",
        "unchanged",
    )
    assert {(u.provider, u.model) for u in proposal.unknown} >= {
        ("cartesia", "sonic-3"), ("gw.acme.internal", "gpt-4o-mini")
    }  # fmt: skip

    gaps = check_rates(settings)
    assert [(g.seen_provider, g.seen_model, g.provider, g.model, g.meter, g.quantity)
            for g in gaps] == [
        ("Eleven-Labs", "eleven_turbo_v2_5", "Eleven-Labs", "eleven_turbo_v2_5", "tts.characters",
         Decimal(1000)),
        ("deepgram", "nova-3-custom", "deepgram", "nova-3-custom", "asr.audio_seconds",
         Decimal(60)),
        ("eu.api.openai.com", "gpt-4o-mini-2024-07-18", "eu.api.openai.com",
         "gpt-4o-mini-2024-07-18", "llm.input_tokens", Decimal(1000)),
        ("eu.api.openai.com", "gpt-4o-mini-2024-07-18", "eu.api.openai.com",
         "gpt-4o-mini-2024-07-18", "llm.output_tokens", Decimal(500)),
        ("gw.acme.internal", "gpt-4o-mini", "gw.acme.internal", "gpt-4o-mini",
         "llm.input_tokens", Decimal(1000)),
        ("gw.acme.internal", "gpt-4o-mini", "gw.acme.internal", "gpt-4o-mini",
         "llm.output_tokens", Decimal(500)),
        ("openai", "gpt-4.1-2025-04-14", "openai", "gpt-4.1-2025-04-14", "llm.input_tokens",
         Decimal(1000)),
        ("openai", "gpt-4.1-2025-04-14", "openai", "gpt-4.1-2025-04-14", "llm.output_tokens",
         Decimal(500)),
    ]  # fmt: skip
    # The host's label and the punctuated name name a provider; the dated model is gpt-4.1's
    # snapshot. Under openai, the shipped alias already names gpt-4o-mini's snapshot.
    result = CliRunner().invoke(
        main, ["rates", "check"],
        env={"LEDGER_HOME": str(settings.home), "LEDGER_REFERENCE_DIR": str(reference)},
    )  # fmt: skip
    assert result.exit_code == 1
    proposed = result.output.split("proposed aliases")[1].splitlines()
    header = proposed.index("# provider_aliases.csv (seen,provider)")
    assert proposed[header : header + 5] == [
        "# provider_aliases.csv (seen,provider)",
        "Eleven-Labs,elevenlabs",
        "eu.api.openai.com,openai",
        "# model_aliases.csv (provider,seen,model)",
        "openai,gpt-4.1-2025-04-14,gpt-4.1",
    ]
    assert (
        "unpriced gw.acme.internal/gpt-4o-mini llm.input_tokens: 1 events, quantity 1000.000000"
        in result.output
    )
    assert "8 meters in use have no price on the rate card" in result.output

    with (reference / "provider_aliases.csv").open("a") as handle:
        handle.write("gw.acme.internal,openai\n")
    with (reference / "model_aliases.csv").open("a") as handle:
        handle.write("deepgram,Nova-3-Custom,nova-3\n")
    lines = _build(settings)
    assert lines == [
        "refresh: incremental, 0 new raw files, 2 sessions (1 model_aliases, 1 provider_aliases), "
        "3 dates in 2 ISO weeks (2026-11-15 .. 2026-11-17)"
    ]
    with connect(settings.warehouse_path, read_only=True) as con:
        restated = con.execute(
            "select session_id, reason from ops.restated_sessions order by 1"
        ).fetchall()
    assert restated == [("custom-asr", "model_aliases"), ("gateway", "provider_aliases")]
    ledger = _ledger(settings)
    assert ledger["gateway"] == (zero, GPT_4O_MINI, zero, GPT_4O_MINI, False)
    assert ledger["custom-asr"] == (NOVA_3_MINUTE, zero, zero, NOVA_3_MINUTE, False)
    assert ledger["untouched"] == (zero, QWEN_TURBO, zero, QWEN_TURBO, False)
