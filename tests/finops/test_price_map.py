"""LiteLLM's price map (ledger.finops.price_map): voice prices as exact Decimals from the JSON's
text, by the rate card's meters, from the map `make env` keeps (the pinned wheel's own file)."""

from __future__ import annotations

import json
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest

from ledger.finops.price_map import (
    BATCH,
    PRICE_MAP_MEMBER,
    extract_price_map,
    find_voice_model,
    load_price_map,
    pinned_version,
    price_map_path,
)

MILLION = Decimal(1000000)


def test_the_kept_map_is_the_pinned_versions():
    assert pinned_version() == "1.110.2"
    assert price_map_path().name == "litellm-1.110.2-model_prices.json"
    assert price_map_path().exists(), "no price map: `make env` keeps it"


@pytest.mark.parametrize(
    ("provider", "model", "component", "prices"),
    [
        # Per second in the map (0.0001), per minute on the card: 0.0001 x 60, nothing rounded.
        ("openai", "whisper-1", "asr", {"asr.audio_seconds": (Decimal("0.0060"), Decimal(60))}),
        # Streamed speech (the default class) at Deepgram's streaming price, per minute as
        # Deepgram publishes it: the map's 0.00012833 a second is 0.0077 / 60 rounded.
        ("deepgram", "nova-3", "asr", {"asr.audio_seconds": (Decimal("0.0077"), Decimal(60))}),
        # Per character in the map (0.000015), per million characters on the card.
        ("openai", "tts-1", "tts", {"tts.characters": (Decimal(15), MILLION)}),
        (
            "elevenlabs",
            "eleven_flash_v2_5",
            "tts",
            {"tts.characters": (Decimal(40), MILLION)},
        ),
        (
            "openai",
            "gpt-realtime-2.1",
            "realtime",
            {
                "realtime.input_audio_tokens": (Decimal(32), MILLION),
                "realtime.cached_input_audio_tokens": (Decimal("0.4"), MILLION),
                "realtime.input_text_tokens": (Decimal(4), MILLION),
                "realtime.cached_input_text_tokens": (Decimal("0.4"), MILLION),
                "realtime.output_audio_tokens": (Decimal(64), MILLION),
                "realtime.output_text_tokens": (Decimal(24), MILLION),
            },
        ),
    ],
)
def test_voice_prices_are_exact_decimals_per_rate_card_meter(provider, model, component, prices):
    found = find_voice_model(provider, model, component)
    assert found is not None and found.missing_meters == []
    assert {meter: (price, per) for meter, (price, per, _note) in found.prices.items()} == prices
    for price, _per, _note in found.prices.values():
        assert isinstance(price, Decimal)


def test_streamed_speech_takes_the_streaming_listing_and_never_the_batch_price():
    # deepgram/streaming/nova-3 is 0.0077 a minute, deepgram/nova-3 (pre-recorded) 0.0043.
    streaming = find_voice_model("deepgram", "nova-3", "asr")
    batch = find_voice_model("deepgram", "nova-3", "asr", price_class=BATCH)
    assert streaming is not None and batch is not None
    assert (streaming.map_key, streaming.price_class, streaming.prices) == (
        "deepgram/streaming/nova-3",
        "streaming",
        {"asr.audio_seconds": (Decimal("0.0077"), Decimal(60), "the provider's per-minute price")},
    )
    assert (batch.map_key, batch.price_class, batch.prices) == (
        "deepgram/nova-3",
        "batch",
        {"asr.audio_seconds": (Decimal("0.0043"), Decimal(60), "the provider's per-minute price")},
    )
    # The map lists nova-2 at its batch price only: for streamed speech that is no price.
    nova_2 = find_voice_model("deepgram", "nova-2", "asr")
    assert nova_2 is not None
    assert (nova_2.prices, nova_2.other_class) == (
        {},
        "the map lists only its batch price (deepgram/nova-2), no streaming one",
    )
    # A provider whose listings state no class keeps its one price, of no stated class.
    whisper = find_voice_model("openai", "whisper-1", "asr")
    assert whisper is not None and whisper.price_class is None


def test_a_model_the_map_prices_otherwise_has_its_meter_missing():
    # gpt-4o-mini-tts is priced per token and per second of output, not per character.
    found = find_voice_model("openai", "gpt-4o-mini-tts", "tts")
    assert found is not None
    assert (found.prices, found.missing_meters) == ({}, ["tts.characters"])


def test_another_providers_entry_or_another_mode_is_not_a_price():
    # whisper-1 is OpenAI's: it is no Deepgram price. A chat model has no TTS price.
    assert find_voice_model("deepgram", "whisper-1", "asr") is None
    assert find_voice_model("openai", "gpt-4o-mini", "tts") is None
    assert find_voice_model("cartesia", "sonic-3", "tts") is None


def test_prices_are_parsed_from_the_text_never_through_float(tmp_path: Path):
    wheel = tmp_path / "litellm-0-py3-none-any.whl"
    text = (
        '{"deepgram/nova-9": {"litellm_provider": "deepgram", "mode": "audio_transcription", '
        '"input_cost_per_second": 0.000071666666666666667}}'
    )
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(PRICE_MAP_MEMBER, text)
    kept = tmp_path / "kept" / "map.json"
    extract_price_map(wheel, kept)
    assert kept.read_text() == text
    found = find_voice_model("deepgram", "nova-9", "asr", load_price_map(kept))
    assert found is not None
    # A float would have kept 17 significant digits at most; x 60 exactly.
    assert found.prices["asr.audio_seconds"][0] == Decimal("0.00430000000000000002")


def test_a_wheel_without_the_map_json_keeps_nothing(tmp_path: Path):
    wheel = tmp_path / "litellm-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(PRICE_MAP_MEMBER, "not json")
    kept = tmp_path / "map.json"
    with pytest.raises(json.JSONDecodeError):
        extract_price_map(wheel, kept)
    assert not kept.exists()


def test_a_missing_map_says_how_to_get_it(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="make env"):
        load_price_map(tmp_path / "absent.json")
