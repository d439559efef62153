"""Token-billed TTS (issue 38 point 3, contract v1.2): a `tts.usage` that carries token counts is
priced per token where the rate card prices its model per token, per character otherwise, never
both.

One home built by the job from the shipped reference data, on 2026-11-20 (USD at 7.2250); the
rate card prices openai gpt-4o-mini-tts at 0.60 USD per 1M input tokens and 12.00 USD per 1M
output audio tokens (OpenAI's price list, the catalogue's figures), and 15.00 USD per 1M
characters for the events that carry no tokens:

- `tokens-1`: gpt-4o-mini-tts, 480 characters, 120 input and 2400 output audio tokens;
- `characters-1`: the same speech as a v1.1 event (no token counts);
- `flash-1`: ElevenLabs flash-v2.5 (priced per character only) with token counts;
- `cached-1`: a gpt-4o-mini-tts cache hit with token counts.
"""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from ledger.core.settings import REPO_ROOT, Settings
from tests.support.homes import build_home
from tests.support.ledger_by_hand import priced_meter, recompute_sessions

pytestmark = pytest.mark.integration

USD = Decimal("7.2250")  # fx_rates.csv, 2026-11-20
SPEECH = {"characters": 480, "audio_seconds": "20"}
TOKENS = {"input_tokens": 120, "output_audio_tokens": 2400}


def line(quantity: int, price: str, per: int) -> Decimal:
    """One meter priced in USD on 2026-11-20, as the dbt models compute it."""
    return priced_meter(quantity, price, per, USD)


def _session(session_id: str, provider: str, model: str, **tts_fields) -> list[dict]:
    def event(n: int, event_type: str, **fields) -> dict:
        return {
            "event_id": f"{session_id}-{n}",
            "source": "tts-tokens-test",
            "event_type": event_type,
            "occurred_at": f"2026-11-20T03:00:{n:02d}Z",
            "tenant_id": "acme-telecom",
            "session_id": session_id,
            **fields,
        }

    return [
        event(0, "session.started", scenario="customer_service", channel="sip",
              pipeline="cascade"),
        event(1, "tts.usage", provider=provider, model=model, turn_index=0, **tts_fields),
        event(59, "session.ended", end_reason="user_hangup"),
    ]  # fmt: skip


def _write_landing(landing: Path) -> None:
    sessions = [
        _session("tokens-1", "openai", "gpt-4o-mini-tts", **SPEECH, **TOKENS),
        _session("characters-1", "openai", "gpt-4o-mini-tts", **SPEECH),
        _session("flash-1", "elevenlabs", "flash-v2.5", **SPEECH, **TOKENS),
        _session("cached-1", "openai", "gpt-4o-mini-tts", **SPEECH, **TOKENS, cache_hit=True),
    ]
    landing.mkdir(parents=True, exist_ok=True)
    (landing / "tts.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for session in sessions for e in session)
    )


@pytest.fixture(scope="module")
def tts_home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("tts-tokens")
    reference = root / "reference"
    shutil.copytree(REPO_ROOT / "data" / "reference", reference)
    return build_home(root, reference_dir=reference, landing_files=_write_landing)


def _rows(settings: Settings, sql: str, *params: str) -> list[tuple]:
    with duckdb.connect(str(settings.published_path), read_only=True) as con:
        return con.execute(sql, list(params)).fetchall()


def _tts(settings: Settings, session_id: str) -> tuple[Decimal, Decimal]:
    (row,) = _rows(
        settings,
        "select tts_cost, tts_cache_savings from marts.fct_session_ledger where session_id = ?",
        session_id,
    )
    return row


def _lines(settings: Settings, session_id: str) -> list[tuple]:
    return _rows(
        settings,
        "select meter, quantity, billed_quantity, amount from marts.fct_usage_lines"
        " where session_id = ? order by meter",
        session_id,
    )


TOKEN_PRICED = line(120, "0.60", 10**6) + line(2400, "12.00", 10**6)
CHARACTER_PRICED = line(480, "15.00", 10**6)


def test_a_token_billed_tts_line_is_priced_by_its_tokens_not_its_characters(tts_home):
    assert TOKEN_PRICED == Decimal("0.0005202") + Decimal("0.208080") == Decimal("0.2086002")
    assert _tts(tts_home, "tokens-1") == (TOKEN_PRICED, Decimal(0))
    # the characters stay a line (their count is still the session's), billing nothing
    assert _lines(tts_home, "tokens-1") == [
        ("tts.characters", Decimal(480), Decimal(0), Decimal(0)),
        ("tts.input_tokens", Decimal(120), Decimal(120), Decimal("0.0005202")),
        ("tts.output_audio_tokens", Decimal(2400), Decimal(2400), Decimal("0.208080")),
    ]


def test_a_tts_line_without_token_counts_is_priced_per_character_as_before(tts_home):
    assert CHARACTER_PRICED == Decimal("0.05202")
    assert _tts(tts_home, "characters-1") == (CHARACTER_PRICED, Decimal(0))
    assert _lines(tts_home, "characters-1") == [
        ("tts.characters", Decimal(480), Decimal(480), CHARACTER_PRICED),
    ]


def test_the_token_counts_of_a_tts_the_card_prices_per_character_bill_nothing(tts_home):
    flash = line(480, "0.05", 1000)
    assert flash == Decimal("0.17340")
    assert _tts(tts_home, "flash-1") == (flash, Decimal(0))
    assert _lines(tts_home, "flash-1") == [
        ("tts.characters", Decimal(480), Decimal(480), flash),
        ("tts.input_tokens", Decimal(120), Decimal(0), Decimal(0)),
        ("tts.output_audio_tokens", Decimal(2400), Decimal(0), Decimal(0)),
    ]


def test_a_cached_token_billed_phrase_saves_its_token_price_once(tts_home):
    assert _tts(tts_home, "cached-1") == (Decimal(0), TOKEN_PRICED)


def test_the_hand_computation_prices_token_billed_tts_as_the_ledger_does(tts_home):
    hand = recompute_sessions(tts_home)
    assert {
        session_id: (row["tts_cost"], row["tts_cache_savings"]) for session_id, row in hand.items()
    } == {
        "tokens-1": (TOKEN_PRICED, Decimal(0)),
        "characters-1": (CHARACTER_PRICED, Decimal(0)),
        "flash-1": (line(480, "0.05", 1000), Decimal(0)),
        "cached-1": (Decimal(0), TOKEN_PRICED),
    }
