"""Conformance of the collectors with the real voice libraries (issue 25): LiveKit Agents 1.8.9
with its OpenAI, Deepgram, Cartesia, ElevenLabs and LiveKit Inference plugins, and Pipecat 1.14
with its OpenAI, Deepgram, Cartesia and ElevenLabs services, each talking its provider's wire
format to local stubs on 127.0.0.1 (tests/support/provider_stubs.py; what is driven how is in
tests/support/real_stacks.py). Every figure expected here is one the stubs served or the text the
test had spoken: 1,200 prompt tokens of which 1,000 cached and 50 completion tokens per chat
completion, 1 s of PCM per TTS request, 3 s (2 s through LiveKit Inference) of audio per STT."""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal

import pytest

from ledger.commands.build import run_build
from ledger.contract.events import EVENT_ADAPTER
from ledger.core.settings import REPO_ROOT, Settings
from ledger.reference import load_reference
from ledger.warehouse import connect
from tests.support.provider_stubs import ChatReply
from tests.support.real_stacks import (
    CUT_SHORT,
    FRAME_SAMPLES,
    INFERENCE_STT_FRAMES,
    SPOKEN,
    STT_FRAMES,
    run_livekit_stacks,
    run_pipecat_stacks,
)

REPLY = ChatReply()
# The contract's exclusive buckets of one stub completion.
LLM_FIGURES = {
    "input_tokens": REPLY.prompt_tokens - REPLY.cached_tokens,  # 200
    "cached_input_tokens": REPLY.cached_tokens,  # 1,000
    "output_tokens": REPLY.completion_tokens,  # 50
}


@pytest.fixture(scope="module")
def livekit_run():
    return run_livekit_stacks()


@pytest.fixture(scope="module")
def pipecat_run():
    return run_pipecat_stacks()


def _usage(events: list[dict]) -> dict[str, list[tuple]]:
    """Per session, its usage lines as (type, provider, model, figures) in emitted order."""
    lines: dict[str, list[tuple]] = defaultdict(list)
    for event in events:
        kind = event["event_type"]
        if kind == "llm.usage":
            figures = {k: event[k] for k in LLM_FIGURES}
        elif kind == "tts.usage":
            figures = {"characters": event["characters"], "audio_seconds": event["audio_seconds"]}
        elif kind == "asr.usage":
            figures = {"audio_seconds": event["audio_seconds"]}
        else:
            continue
        lines[event["session_id"]].append((kind, event["provider"], event["model"], figures))
    return dict(lines)


def _interruptions(events: list[dict]) -> dict[str, list[tuple]]:
    found: dict[str, list[tuple]] = defaultdict(list)
    for event in events:
        if event["event_type"] == "turn.interrupted":
            found[event["session_id"]].append((event["turn_index"], event["is_false_interruption"]))
    return dict(found)


SHIPPED_REFERENCE = REPO_ROOT / "data" / "reference"


def _unpriced(events: list[dict]) -> set[tuple[str, str, str]]:
    """(component, provider, model) of the usage lines the shipped reference data cannot price:
    names resolved through its aliases as pricing resolves them (`ReferenceData.resolve_name`)."""
    reference = load_reference(SHIPPED_REFERENCE)
    priced = {(row.meter.split(".")[0], row.provider, row.model) for row in reference.rate_card}
    named = {
        (e["event_type"].split(".")[0], e["provider"], e["model"])
        for e in events
        if e["event_type"].endswith(".usage")
    }
    return {
        (component, provider, model)
        for component, provider, model in named
        if (component, *reference.resolve_name(provider, model)) not in priced
    }


def test_every_event_of_the_real_stacks_passes_the_contract(livekit_run, pipecat_run):
    for events, _ in (livekit_run, pipecat_run):
        for event in events:
            EVENT_ADAPTER.validate_python(event)  # raises on any contract violation
        assert len({e["event_id"] for e in events}) == len(events)


def test_the_real_plugins_spoke_each_providers_wire_format_to_the_stubs(livekit_run, pipecat_run):
    _, livekit_stub = livekit_run
    chats = [body for kind, body in livekit_stub.requests if kind == "chat"]
    # the OpenAI plugin and LiveKit Inference both asked for streamed usage
    assert [(c["model"], c["stream_options"]) for c in chats] == [
        ("gpt-4.1-mini", {"include_usage": True}),
        ("openai/gpt-4.1-mini", {"include_usage": True}),
    ]
    kinds = [kind for kind, _ in livekit_stub.requests]
    assert sorted(set(kinds)) == [
        "cartesia_bytes",
        "chat",
        "deepgram_listen",
        "elevenlabs_multi_stream",
        "inference_stt",
        "openai_speech",
    ]
    # the streams the test drove (a session's own listening connections hear nothing, or the
    # silent microphone for as long as it ran)
    assert ("deepgram", 2 * FRAME_SAMPLES * STT_FRAMES) in livekit_stub.audio_heard
    assert ("inference", 2 * FRAME_SAMPLES * INFERENCE_STT_FRAMES) in livekit_stub.audio_heard
    _, pipecat_stub = pipecat_run
    assert [kind for kind, _ in pipecat_stub.requests] == [
        "deepgram_listen",
        "chat",
        "openai_speech",
        "cartesia_bytes",
        "elevenlabs_timestamps",
    ]
    assert pipecat_stub.audio_heard == [("deepgram", 2 * FRAME_SAMPLES * STT_FRAMES)]


def test_livekit_usage_names_the_provider_and_equals_what_the_stubs_served(livekit_run):
    events, _ = livekit_run
    usage = _usage(events)
    # LiveKit counts its own 10 ms end-of-segment marker frame after a chunked (HTTP) TTS
    # answer: 1 s served is reported as 1.01 s. Its streamed (WebSocket) TTS adds none.
    plugins = usage["RM_plugins"]
    assert plugins[:3] == [
        ("llm.usage", "openai", "gpt-4.1-mini", LLM_FIGURES),
        ("tts.usage", "openai", "tts-1", {"characters": len(SPOKEN), "audio_seconds": "1.01"}),
        ("asr.usage", "deepgram", "nova-3", {"audio_seconds": "3"}),
    ]
    # LiveKit's Deepgram plugin also bills the lifetime of the session's own idle listening
    # connection (Deepgram charges WebSocket time): named the same, its length is wall-clock.
    assert {line[:3] for line in plugins[3:]} == {("asr.usage", "deepgram", "nova-3")}
    assert usage["RM_inference"] == [
        ("llm.usage", "openai", "gpt-4.1-mini", LLM_FIGURES),
        ("tts.usage", "cartesia", "sonic-2", {"characters": len(SPOKEN), "audio_seconds": "1.01"}),
        ("asr.usage", "deepgram", "nova-3", {"audio_seconds": "2"}),
    ]
    assert usage["RM_interruptions"] == [
        (
            "tts.usage",
            "elevenlabs",
            "eleven_flash_v2_5",
            {"characters": len(CUT_SHORT), "audio_seconds": "1"},
        ),
    ]
    false_interruption = usage["RM_false_interruption"]
    assert false_interruption[0] == (
        "tts.usage",
        "openai",
        "tts-1",
        {"characters": len(CUT_SHORT), "audio_seconds": "1.01"},
    )
    # what the silent microphone streamed is wall-clock: only its naming is checked
    assert {line[:3] for line in false_interruption[1:]} <= {("asr.usage", "deepgram", "nova-3")}


def test_livekit_interrupted_turn_and_false_interruption(livekit_run):
    events, _ = livekit_run
    # a reply cut short by session.interrupt() while it played; a reply LiveKit paused for the
    # caller's "uh" and resumed when no words followed: each on turn 0, its session's only turn
    assert _interruptions(events) == {
        "RM_interruptions": [(0, False)],
        "RM_false_interruption": [(0, True)],
    }


def test_pipecat_usage_names_the_provider_and_equals_what_the_stubs_served(pipecat_run):
    events, _ = pipecat_run
    assert _usage(events) == {
        "pipecat-openai": [
            # Pipecat's Deepgram service reports its default model as nova-3-general
            ("asr.usage", "deepgram", "nova-3-general", {"audio_seconds": "3"}),
            ("llm.usage", "openai", "gpt-4.1-mini", LLM_FIGURES),
            # Pipecat reports TTS characters only
            ("tts.usage", "openai", "tts-1", {"characters": len(SPOKEN), "audio_seconds": "0"}),
        ],
        "pipecat-cartesia": [
            ("tts.usage", "cartesia", "sonic-2", {"characters": len(SPOKEN), "audio_seconds": "0"})
        ],
        "pipecat-elevenlabs": [
            (
                "tts.usage",
                "elevenlabs",
                "eleven_flash_v2_5",
                {"characters": len(SPOKEN), "audio_seconds": "0"},
            )
        ],
    }
    assert _interruptions(events) == {"pipecat-openai": [(0, False)]}


def test_every_usage_line_names_what_the_shipped_reference_data_prices(livekit_run, pipecat_run):
    unpriced = _unpriced(livekit_run[0]) | _unpriced(pipecat_run[0])
    # Before issue 25 every LiveKit line was unpriced (provider "127.0.0.1:<port>", "Deepgram",
    # "livekit" with "deepgram/nova-3:en"), and the plugins' default models had no price.
    assert unpriced == set()


@pytest.mark.integration
def test_the_real_sessions_build_into_a_ledger_without_an_unpriced_line(
    livekit_run, pipecat_run, tmp_path
):
    """The real sessions' events, through ingest and a real build on the shipped reference data:
    every usage line priced, at the rate card's unit price."""
    settings = Settings.from_env(
        {"LEDGER_HOME": str(tmp_path / "home"), "LEDGER_REFERENCE_DIR": str(SHIPPED_REFERENCE)}
    )
    settings.ensure_dirs()
    events = [*livekit_run[0], *pipecat_run[0]]
    (settings.landing_dir / "real-stacks.jsonl").write_text(
        "".join(json.dumps(event) + "\n" for event in events)
    )

    assert run_build(settings).success
    with connect(settings.warehouse_path, read_only=True) as con:
        lines = con.execute(
            "select seen_provider, seen_model, provider, model, meter, is_priced, unit_price, "
            "amount is not null and unpriced_reason is null "
            "from marts.fct_usage_lines order by all"
        ).fetchall()
    # Every name a usage event carried reached the ledger, each line priced.
    assert {(p, m) for p, m, *_ in lines} == {
        (e["provider"], e["model"]) for e in events if e["event_type"].endswith(".usage")
    }
    assert [line for line in lines if not line[5] or not line[7]] == []
    # The rate card's unit prices (price / per), exact: gpt-4.1-mini's three token meters.
    gpt = {line[4]: line[6] for line in lines if line[3] == "gpt-4.1-mini"}
    assert gpt == {
        "llm.input_tokens": Decimal("0.40") / 1_000_000,
        "llm.cached_input_tokens": Decimal("0.10") / 1_000_000,
        "llm.output_tokens": Decimal("1.60") / 1_000_000,
    }
    # Names as the plugins reported them, priced under the rate card's names.
    resolved = {(p, m): (rp, rm) for p, m, rp, rm, *_ in lines}
    assert resolved[("deepgram", "nova-3-general")] == ("deepgram", "nova-3")
    assert resolved[("elevenlabs", "eleven_flash_v2_5")] == ("elevenlabs", "flash-v2.5")
