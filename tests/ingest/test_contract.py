"""The contract: pydantic models are the source of truth, the bulk SQL validation must agree."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import duckdb
import pytest

from ledger.contract.events import EVENT_ADAPTER, EVENT_TYPES, json_schema
from ledger.contract.fields import all_fields, raw_event_columns
from ledger.contract.verdict import verdict
from ledger.ingest.validation import proven_sql, validation_sql

INGEST_TIME = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

BASE = {
    "event_id": "e-1",
    "source": "gw-cn-east-1",
    "occurred_at": "2026-11-01T10:00:00.250Z",
    "tenant_id": "acme-telecom",
    "session_id": "s-1",
}
VALID = {
    "session.started": {"scenario": "companion", "channel": "webrtc", "pipeline": "realtime"},
    "session.ended": {"end_reason": "user_hangup"},
    "asr.usage": {"provider": "aliyun", "model": "paraformer", "audio_seconds": "4.250"},
    "llm.usage": {
        "provider": "deepseek",
        "model": "deepseek-chat",
        "turn_index": 2,
        "input_tokens": 120,
        "cached_input_tokens": 900,
        "output_tokens": 80,
        "phase": "substantive",
        "route": "large",
    },
    "tts.usage": {
        "provider": "aliyun",
        "model": "cosyvoice",
        "characters": 42,
        "audio_seconds": 3.5,
    },
    "realtime.usage": {
        "provider": "openai",
        "model": "gpt-realtime",
        "input_audio_tokens": 1,
        "cached_input_audio_tokens": 2,
        "input_text_tokens": 3,
        "cached_input_text_tokens": 4,
        "output_audio_tokens": 5,
        "output_text_tokens": 6,
    },
    "vision.usage": {
        "provider": "qwen",
        "model": "qwen-vl-plus",
        "images": 1,
        "image_tokens": 1280,
        "cache_hit": True,
    },
    "infra.usage": {"provider": "telco", "resource": "pstn", "quantity": 3, "unit": "path_minutes"},
    "turn.interrupted": {
        "turn_index": 3,
        "wasted_output_tokens": 40,
        "wasted_tts_characters": 25,
        "is_false_interruption": False,
    },
    "turn.latency": {
        "turn_index": 3,
        "segment": "llm_ttft",
        "started_at": "2026-11-01T17:59:59.940+08:00",
        "ended_at": "2026-11-01T18:00:00.250+08:00",
    },
    "session.degraded": {"kind": "tts_filler", "reason": "tts_timeout"},
    "cost.reported": {
        "provider": "retell",
        "component": "llm",
        "amount": "0.0125",
        "currency": "USD",
        "model": "gpt-4o-mini",
        "item": "llm_tokens",
    },
    "turn.shadow": {
        "turn_index": 3,
        "candidate": "eou-v2",
        "kind": "endpointing",
        "endpointing_ms": 182.5,
        "would_interrupt": False,
    },
}


def event(kind: str, /, **changes: object) -> dict:
    document = {**BASE, "event_type": kind, **VALID[kind]}
    for key, value in changes.items():
        if value is ...:
            document.pop(key, None)
        else:
            document[key] = value
    return document


def line(kind: str, /, **changes: object) -> str:
    return json.dumps(event(kind, **changes))


def number_line(kind: str, name: str, number: str, /, **changes: object) -> str:
    """A line whose field `name` is the JSON number `number`, written as given (json.dumps would
    write a float's shortest text), after the other fields."""
    return line(kind, **{name: ..., **changes})[:-1] + f', "{name}": {number}}}'


# (raw line, expected verdict) — every quarantine reason the contract can give, and the edge cases
# where a lax parser and a strict one would disagree.
CASES: list[tuple[str, tuple[str, str | None] | None]] = [
    *[(line(t), None) for t in EVENT_TYPES],
    ("{not json", ("malformed_json", None)),
    ("[1, 2]", ("malformed_json", None)),
    ('"just a string"', ("malformed_json", None)),
    (line("llm.usage", event_id=...), ("missing_field", "event_id")),
    (line("llm.usage", event_type=...), ("missing_field", "event_type")),
    (line("llm.usage", tenant_id=None), ("missing_field", "tenant_id")),
    (line("llm.usage", output_tokens=...), ("missing_field", "output_tokens")),
    (line("llm.usage", event_type=7), ("bad_type", "event_type")),
    (line("llm.usage", event_type="llm.usage.v2"), ("bad_value", "event_type")),
    (line("llm.usage", transcript="hello, my name is"), ("unknown_field", "transcript")),
    (line("llm.usage", transcript=None), None),
    (line("asr.usage", images=1), ("unknown_field", "images")),
    (line("llm.usage", input_tokens="120"), ("bad_type", "input_tokens")),
    (line("llm.usage", input_tokens=12.5), ("bad_type", "input_tokens")),
    (line("llm.usage", input_tokens=True), ("bad_type", "input_tokens")),
    (line("llm.usage", input_tokens=-1), ("bad_value", "input_tokens")),
    (line("llm.usage", phase="smalltalk"), ("bad_value", "phase")),
    (line("llm.usage", phase=3), ("bad_type", "phase")),
    (line("llm.usage", route=""), ("bad_value", "route")),
    (line("llm.usage", tenant_id="x" * 129), ("bad_value", "tenant_id")),
    (line("llm.usage", tenant_id="x" * 128), None),
    # No free text (SPEC 3): identifiers are printable ASCII without spaces, short codes narrower.
    (line("llm.usage", tenant_id="acme telecom"), ("bad_value", "tenant_id")),
    (line("llm.usage", session_id="s-\u00e9"), ("bad_value", "session_id")),
    (line("llm.usage", model="gpt-4o/mini:2024-08"), None),
    (line("llm.usage", route="x" * 65), ("bad_value", "route")),
    (line("llm.usage", route="small model"), ("bad_value", "route")),
    # A card number in a short code is personal data first (SPEC 3), not just too many digits.
    (line("session.degraded", reason="4111 1111 1111 1111"), ("personal_data", "reason")),
    (line("session.degraded", reason="tts.timeout:504"), None),
    # A short code holds at most 8 digits: no card or phone number, however it is written.
    (line("session.degraded", reason="4111111111111111"), ("personal_data", "reason")),
    (line("session.degraded", reason="card:4111-1111-1111-1111"), ("personal_data", "reason")),
    # not a card (Luhn fails): still more than 8 digits in a short code
    (line("session.degraded", reason="4111111111111112"), ("bad_value", "reason")),
    (line("session.degraded", reason="13912345678"), ("bad_value", "reason")),
    (line("session.degraded", reason="a1b2c3d4e5f6g7h8i9"), ("bad_value", "reason")),
    (line("session.degraded", reason="sip.bye:20261120"), None),
    (line("llm.usage", route="123456789"), ("bad_value", "route")),
    (line("cost.reported", item="4111.1111.1111.1111"), ("personal_data", "item")),
    (line("cost.reported", item="gpu_hours.2026-11"), None),
    (line("session.started", agent_id="agent one"), ("bad_value", "agent_id")),
    # Personal data stays out of identifiers and short codes (SPEC 3, issue 26 point 5): a card
    # number (15-19 digits, separators allowed, 3-6 first, Luhn), an e-mail, a `+` phone number.
    (line("llm.usage", session_id="4111 1111 1111 1111"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="4111-1111-1111-1111"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="4111111111111111"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="call-378282246310005"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="4111111111111112"), None),
    (line("llm.usage", session_id="4111111111111111111111"), None),
    # an epoch in a machine id starts with 1: not a card, however long the run
    (line("llm.usage", session_id="sess-1733300000000-42"), None),
    (line("llm.usage", session_id="sess-1733300000000123-42"), None),
    # UUIDs (the simulator's and collectors' ids) whose digit groups passed for a card by Luhn
    # when any digits joined by dashes counted: grouped digits count only as cards are printed
    (line("llm.usage", event_id="62983833-6721-448d-94f1-c0d30835898e"), None),
    (line("llm.usage", session_id="8aded6b9-efb3-4199-8543-72373951ee71"), None),
    (line("llm.usage", event_id="b560a3d9-2769-4c82-a338-982864377611"), None),
    (line("llm.usage", session_id="abcd4111-1111-1111-1111-1111abcd"), None),
    (line("llm.usage", session_id="call-3782-822463-10005"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="x-4111-1111-1111-1111-x"), ("personal_data", "session_id")),
    # digits glued to letters in a hexadecimal id are not a card (a SHA-256 id held such runs);
    # in any other word they are (issue 41)
    (line("llm.usage", event_id="cb317a98d402754525430290b8dd5d48"), None),
    (line("llm.usage", session_id="card4111111111111111"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="4111.1111.1111.1111"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="+1(415)555-2671"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="tel:0044.20.7946.0958"), ("personal_data", "session_id")),
    (line("llm.usage", tenant_id="jane.doe%40mail.example.com"), ("personal_data", "tenant_id")),
    (line("llm.usage", session_id="a84b4c76e66710@pc33.atlanta.example.com"), None),
    (line("llm.usage", session_id="card-4111111111111111-2"), ("personal_data", "session_id")),
    (line("llm.usage", tenant_id="a@b.co"), ("personal_data", "tenant_id")),
    (line("llm.usage", event_id="user.name+tag@mail.example.com"), ("personal_data", "event_id")),
    (line("llm.usage", tenant_id="ops@acme"), None),
    (line("llm.usage", session_id="+8613800138000"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="s+86 138-0013-8000"), ("personal_data", "session_id")),
    (line("llm.usage", session_id="+1234567"), None),
    (line("llm.usage", model="gpt-4o+1234567"), None),
    (line("session.started", agent_id="agent-a@b.co"), ("personal_data", "agent_id")),
    # a short code with digits grouped in fours as a card is written, however few
    (line("session.degraded", reason="card:4111.1111"), ("personal_data", "reason")),
    (line("session.degraded", reason="x:4111 1111"), ("personal_data", "reason")),
    (line("session.degraded", reason="x:411.11111"), None),
    (line("llm.usage", session_id="a-1234-5678"), None),
    # personal data wins over the value's other faults, not over a wrong type
    (line("llm.usage", tenant_id="a@b.co" + "x" * 129), ("personal_data", "tenant_id")),
    (line("llm.usage", tenant_id="a@b.co", phase="x"), ("personal_data", "tenant_id")),
    (line("llm.usage", tenant_id="a@b.co", input_tokens="1"), ("bad_type", "input_tokens")),
    (line("session.started", language="zh-CN"), None),
    # One column, two rules: `kind` is a degradation kind or a shadow kind by event type.
    (line("session.degraded", kind="endpointing"), ("bad_value", "kind")),
    (line("turn.shadow", kind="tts_filler"), ("bad_value", "kind")),
    (line("turn.shadow", kind="vad", is_false_interruption=True, would_interrupt=True), None),
    (line("turn.shadow", would_interrupt="no"), ("bad_type", "would_interrupt")),
    (line("cost.reported", currency="usd"), ("bad_value", "currency")),
    (line("cost.reported", component="telephony"), ("bad_value", "component")),
    (line("cost.reported", amount="-0.5"), ("bad_value", "amount")),
    (line("cost.reported", model=...), None),
    (line("tts.usage", cache_hit="yes"), ("bad_type", "cache_hit")),
    (line("tts.usage", audio_seconds="four"), ("bad_type", "audio_seconds")),
    (line("tts.usage", audio_seconds="1e3"), ("bad_type", "audio_seconds")),
    (line("tts.usage", audio_seconds="-1.5"), ("bad_value", "audio_seconds")),
    (line("tts.usage", audio_seconds=-1.5), ("bad_value", "audio_seconds")),
    (line("tts.usage", audio_seconds="1.1234567"), ("bad_value", "audio_seconds")),
    (line("tts.usage", audio_seconds="1.1234560"), None),
    (line("tts.usage", audio_seconds="1234567890123.5"), ("bad_value", "audio_seconds")),
    (line("tts.usage", audio_seconds=1e3), None),
    # A decimal sent as a JSON number is judged by its own text, as the same text sent as a string
    # (a double would read 0.10000000000000000000000001 as 0.1): exact, or quarantined.
    (
        number_line("tts.usage", "audio_seconds", "0.10000000000000000000000001"),
        ("bad_value", "audio_seconds"),
    ),
    (number_line("tts.usage", "audio_seconds", "1.1234567"), ("bad_value", "audio_seconds")),
    (number_line("tts.usage", "audio_seconds", "1234567890123.5"), ("bad_value", "audio_seconds")),
    (number_line("cost.reported", "amount", "0.0125000000000000000001"), ("bad_value", "amount")),
    (number_line("tts.usage", "audio_seconds", "123456789012.123456"), None),
    (number_line("tts.usage", "audio_seconds", "12.500000"), None),
    (number_line("tts.usage", "audio_seconds", "1.1234560"), None),
    # No exponent, as in a string: 1e2 is bad_type even though its value (100) would fit.
    (number_line("tts.usage", "audio_seconds", "1e2"), ("bad_type", "audio_seconds")),
    # Negative zero is bad_value in either spelling (SPEC 3, issue 26): -0 as a number was stored 0
    (number_line("tts.usage", "audio_seconds", "-0"), ("bad_value", "audio_seconds")),
    (line("tts.usage", audio_seconds="-0"), ("bad_value", "audio_seconds")),
    (number_line("tts.usage", "audio_seconds", "-0.0"), ("bad_value", "audio_seconds")),
    (line("tts.usage", audio_seconds="-0.000"), ("bad_value", "audio_seconds")),
    (number_line("infra.usage", "quantity", "-0"), ("bad_value", "quantity")),
    (number_line("tts.usage", "audio_seconds", "0"), None),
    (number_line("tts.usage", "audio_seconds", "0.0"), None),
    # an integer field reads -0 as the integer 0, both ways
    (number_line("llm.usage", "input_tokens", "-0"), None),
    (number_line("infra.usage", "quantity", "2.5E-3"), ("bad_type", "quantity")),
    (number_line("turn.shadow", "endpointing_ms", "-1.5e0"), ("bad_type", "endpointing_ms")),
    # The key is found however JSON spells it, and not inside a string value.
    (
        number_line(
            "tts.usage", "audio\\u005Fseconds", "0.10000000000000000000000001", audio_seconds=...
        ),
        ("bad_value", "audio_seconds"),
    ),
    (
        number_line(
            "tts.usage", "audio_seconds", "1.5", model='x","audio_seconds":0.100000000000000000001'
        ),
        None,
    ),
    (line("llm.usage", occurred_at="2026-11-01T10:00:00"), ("bad_type", "occurred_at")),
    (line("llm.usage", occurred_at="2026-11-01"), ("bad_type", "occurred_at")),
    (line("llm.usage", occurred_at="2026-02-30T10:00:00Z"), ("bad_type", "occurred_at")),
    (line("llm.usage", occurred_at=1764000000), ("bad_type", "occurred_at")),
    (line("llm.usage", occurred_at="2026-11-01 10:00:00+08:00"), None),
    (line("llm.usage", occurred_at="2026-11-01t10:00:00z"), ("bad_type", "occurred_at")),
    (line("llm.usage", occurred_at="2026-11-30T12:04:59Z"), None),
    # before 2000 is no metered event (an unset clock): bad_value, judged on the instant (SPEC 3)
    (line("llm.usage", occurred_at="0001-01-01T00:00:00Z"), ("bad_value", "occurred_at")),
    (line("llm.usage", occurred_at="1999-12-31T23:59:59.999999Z"), ("bad_value", "occurred_at")),
    (line("llm.usage", occurred_at="2000-01-01T01:00:00+02:00"), ("bad_value", "occurred_at")),
    (line("llm.usage", occurred_at="2000-01-01T00:00:00Z"), None),
    (line("llm.usage", occurred_at="1999-12-31T23:00:00-02:00"), None),
    (line("llm.usage", occurred_at="2026-11-30T12:05:01Z"), ("future_timestamp", "occurred_at")),
    (
        line("llm.usage", occurred_at="2026-11-30T20:05:01+08:00"),
        ("future_timestamp", "occurred_at"),
    ),
    (
        line("turn.latency", ended_at="2026-11-01T17:59:59.939+08:00"),
        ("bad_value", "ended_at"),
    ),
    # SPEC 3 clock sanity (LEDGER_CLOCK_SKEW_MINUTES, default 5): segment times within 5 minutes
    # of occurred_at (10:00:00.250Z); a device clock a day ahead, in 2099, 0001 or 9999 is not.
    (line("turn.latency", started_at="2026-11-01T09:55:00.250Z"), None),
    (line("turn.latency", started_at="2026-11-01T09:55:00.249Z"), ("clock_skew", "started_at")),
    (
        line(
            "turn.latency",
            started_at="2026-11-02T10:00:00.000Z",
            ended_at="2026-11-02T10:00:00.310Z",
        ),
        ("clock_skew", "started_at"),
    ),
    (line("turn.latency", ended_at="2026-11-01T10:05:00.251Z"), ("clock_skew", "ended_at")),
    (line("turn.latency", ended_at="2099-11-01T10:00:00.000Z"), ("clock_skew", "ended_at")),
    (line("turn.latency", ended_at="9999-12-31T23:59:59.999Z"), ("clock_skew", "ended_at")),
    (
        line(
            "turn.latency",
            started_at="0001-01-01T00:00:00.000Z",
            ended_at="0001-01-01T00:00:00.300Z",
        ),
        ("clock_skew", "started_at"),
    ),
    (line("turn.latency", segment="tts_first_byte"), ("bad_value", "segment")),
    (line("infra.usage", unit="hours"), ("bad_value", "unit")),
    (line("session.degraded", kind="realtime_to_cascade", turn_index=...), None),
    # missing wins over unknown, unknown over bad type, bad type over bad value
    (line("llm.usage", output_tokens=..., transcript="x"), ("missing_field", "output_tokens")),
    (line("llm.usage", transcript="x", input_tokens="1"), ("unknown_field", "transcript")),
    (line("llm.usage", input_tokens="1", phase="x"), ("bad_type", "input_tokens")),
    # lines the per-type fast check cannot prove valid, which the ladder must still accept
    (line("llm.usage", route=None), None),
    ("  \t" + line("session.ended"), None),
    (line("llm.usage", model='deep"seek\\chat'), None),
    # A key repeated in one object is refused, even with the same value (issue 26): DuckDB reads
    # the first, Python the last, and through the collector that spoofed a source.
    (
        line("llm.usage").replace(', "model": "deepseek-chat"', ', "model": "x", "model": "x"'),
        ("duplicate_key", "model"),
    ),
    (line("llm.usage")[:-1] + ', "source": "gw-b"}', ("duplicate_key", "source")),
    (line("llm.usage")[:-1] + ', "sour\\u0063e": "gw-b"}', ("duplicate_key", "source")),
    ('{"a": 1, "b": 2, "b": 3, "a": 4}', ("duplicate_key", "b")),
    # nested objects are no contract value: the top level is what the rule reads
    (
        line("llm.usage", provider="P").replace('"P"', '{"name": "a", "name": "b"}'),
        ("bad_type", "provider"),
    ),
    # identifiers are ASCII (SPEC 3): a non-ASCII letter is refused whatever the length
    (line("llm.usage", tenant_id="é"), ("bad_value", "tenant_id")),
    (line("llm.usage", route="x" * 64), None),
    (json.dumps(event("session.started"), separators=(",", ":")), None),
    (line("llm.usage", turn_index=2**62), None),
    (line("llm.usage", turn_index=2**62 + 1), ("bad_value", "turn_index")),
    # a metered count is priced: 12 digits at most, as a decimal (2**62 tokens overflowed a build)
    (line("llm.usage", input_tokens=10**12 - 1), None),
    (line("llm.usage", input_tokens=10**12), ("bad_value", "input_tokens")),
    (line("llm.usage", input_tokens=2**62), ("bad_value", "input_tokens")),
    (line("tts.usage", characters=10**12), ("bad_value", "characters")),
    (line("llm.usage", provider={"name": "deepseek"}), ("bad_type", "provider")),
    (line("llm.usage", provider=["deepseek"]), ("bad_type", "provider")),
    (line("tts.usage", audio_seconds=1.123456), None),
    (line("tts.usage", cache_hit=...), None),
    # contract v1.2: a token-billed TTS's counts, optional and metered like any other count
    (line("tts.usage", input_tokens=120, output_audio_tokens=2400), None),
    (line("tts.usage", input_tokens=None, output_audio_tokens=2400), None),
    (line("tts.usage", input_tokens=-1), ("bad_value", "input_tokens")),
    (line("tts.usage", output_audio_tokens="2400"), ("bad_type", "output_audio_tokens")),
    (line("tts.usage", output_audio_tokens=10**12), ("bad_value", "output_audio_tokens")),
    (line("realtime.usage", output_text_tokens=1.0), ("bad_type", "output_text_tokens")),
    (line("turn.latency", started_at="2026-11-01T18:00:00.000+08:00"), None),
]


def lines_table(files: list[list[str]]) -> duckdb.DuckDBPyConnection:
    """A connection with table `lines` holding `files` (lists of raw lines), numbered from 1."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    con.execute("create table lines (file_index integer, line_number bigint, raw_text varchar)")
    con.executemany(
        "insert into lines values (?, ?, ?)",
        [
            (index, number, raw)
            for index, lines in enumerate(files)
            for number, raw in enumerate(lines, 1)
        ],
    )
    return con


def validated(files: list[list[str]], *, fast: bool = True) -> list[tuple]:
    """Every row of the bulk validation of `files`, ordered by file and line."""
    return (
        lines_table(files)
        .execute(
            f"select * from ({validation_sql('lines', fast=fast)}) order by file_index, line_number",
            {"ingest_time": INGEST_TIME.isoformat()},
        )
        .fetchall()
    )


def proven_lines(lines: list[str]) -> list[int]:
    """The lines the per-type fast check proved valid, without the ladder."""
    rows = lines_table([lines]).execute(
        proven_sql("lines"), {"ingest_time": INGEST_TIME.isoformat()}
    )
    return sorted(number for _, number in rows.fetchall())


def bulk_verdicts(lines: list[str]) -> list[tuple[str, str | None] | None]:
    # file_index, line_number, quarantine_reason, quarantine_detail, ...
    return [None if row[2] is None else (row[2], row[3]) for row in validated([lines])]


def mutations() -> list[str]:
    """Valid events of every type, each spoilt one way in turn: fields dropped, nulled, retyped,
    stretched, an unknown or foreign key added, keys repeated, other spacing."""
    spoilers: list[object] = [..., None, "1", 1, 1.5, -1, True, [1], {"a": 1}, "", "x" * 129]
    spoilers += ["2026-11-01T10:00:00Z", "1.5", 2**62 + 1]
    spoilers += ["a@b.co", "4111 1111 1111 1111", "+8613800138000", "c:4111.1111"]
    lines = []
    for event_type in EVENT_TYPES:
        document = event(event_type)
        lines.append(json.dumps(document, separators=(",", ":")))
        for name in document:
            lines += [line(event_type, **{name: value}) for value in spoilers]
        lines.append(line(event_type, transcript="x"))
        lines.append(line(event_type, transcript=None))
        foreign = "images" if event_type != "vision.usage" else "characters"
        lines.append(line(event_type, **{foreign: 1}))
        compact = json.dumps(document, separators=(",", ":"))
        lines.append(compact[:-1] + ',"source":' + json.dumps(document["source"]) + "}")
    return lines


@pytest.mark.parametrize(("raw", "expected"), CASES, ids=[c[0][:60] for c in CASES])
def test_pydantic_verdict_names_the_expected_reason(raw: str, expected: object) -> None:
    assert verdict(raw, INGEST_TIME) == expected


def test_bulk_validation_agrees_with_pydantic_on_every_case() -> None:
    lines = [raw for raw, _ in CASES]
    assert bulk_verdicts(lines) == [expected for _, expected in CASES]


def test_bulk_validation_agrees_with_pydantic_on_a_corpus_of_spoilt_events() -> None:
    lines = mutations()
    assert len(lines) > 1500
    assert bulk_verdicts(lines) == [verdict(raw, INGEST_TIME) for raw in lines]


def test_the_per_type_fast_check_and_the_ladder_give_identical_rows() -> None:
    lines = mutations() + [raw for raw, _ in CASES]
    fast, ladder = validated([lines]), validated([lines], fast=False)
    assert fast == ladder
    # The fast check proved every valid line but the ones only the ladder can accept (a null or a
    # repeated key), and no other line.
    proven = set(proven_lines(lines))
    valid = {row[1] for row in fast if row[2] is None}
    only_the_ladder = {
        number
        for number in valid
        if ": null" in (raw := lines[number - 1])
        or '"model": "x", "model": "x"' in raw
        or raw.count('"source"') > 1
    }
    assert proven == valid - only_the_ladder
    assert len(proven) > 250 and len(only_the_ladder) > 10


def test_lines_of_several_files_are_validated_apart() -> None:
    rows = validated([[line("session.ended"), "{oops"], ["{oops", line("session.ended")]])
    assert [(row[0], row[1], row[2]) for row in rows] == [
        (0, 1, None),
        (0, 2, "malformed_json"),
        (1, 1, "malformed_json"),
        (1, 2, None),
    ]
    assert rows[0][4:] == rows[3][4:]  # the same event: the same typed values and payload hash


def test_bulk_validation_stores_timestamps_in_utc_and_defaults_cache_hit() -> None:
    con = lines_table([[line("tts.usage"), line("llm.usage")]])
    rows = con.execute(
        f"select occurred_at, cache_hit, audio_seconds, output_tokens "
        f"from ({validation_sql('lines')}) order by line_number",
        {"ingest_time": INGEST_TIME.isoformat()},
    ).fetchall()
    from decimal import Decimal

    assert rows == [
        (datetime(2026, 11, 1, 10, 0, 0, 250000), False, Decimal("3.500000"), None),
        (datetime(2026, 11, 1, 10, 0, 0, 250000), None, None, 80),
    ]


def test_a_decimal_sent_as_a_json_number_is_stored_as_written_or_quarantined() -> None:
    from decimal import Decimal

    texts = ["1.5", "12.500000", "123456789012.123456", "0.10000000000000000000000001", "1e2"]
    lines = [number_line("tts.usage", "audio_seconds", text) for text in texts]
    lines += [line("tts.usage", audio_seconds=text) for text in texts]
    # A repeated key is no value at all (issue 26): DuckDB's reader took the first, Python the last.
    first, second = "7.25", "0.10000000000000000000000001"
    lines.append(
        number_line("tts.usage", "audio_seconds", first)[:-1] + f', "audio_seconds": {second}}}'
    )
    lines.append(
        number_line("tts.usage", "audio_seconds", second)[:-1] + f', "audio_seconds": {first}}}'
    )
    for fast in (True, False):
        con = lines_table([lines])
        rows = con.execute(
            # the value stored: a quarantined line keeps its raw text, not its typed values
            f"select quarantine_reason, quarantine_detail, "
            f"case when quarantine_reason is null then audio_seconds end "
            f"from ({validation_sql('lines', fast=fast)}) order by line_number",
            {"ingest_time": INGEST_TIME.isoformat()},
        ).fetchall()
        read = [
            (None, None, Decimal("1.500000")),
            (None, None, Decimal("12.500000")),
            (None, None, Decimal("123456789012.123456")),
            ("bad_value", "audio_seconds", None),
            ("bad_type", "audio_seconds", None),
        ]
        assert rows == [
            *read,  # as JSON numbers
            *read,  # as strings: the same verdicts and values
            ("duplicate_key", "audio_seconds", None),
            ("duplicate_key", "audio_seconds", None),
        ]


def test_json_schema_is_derived_from_the_models_and_accepts_what_they_accept() -> None:
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert sorted(schema["discriminator"]["mapping"]) == sorted(EVENT_TYPES)
    import jsonschema

    for event_type in EVENT_TYPES:
        document = event(event_type)
        jsonschema.validate(document, schema)
        EVENT_ADAPTER.validate_python(document)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(event("llm.usage", transcript="hi"), schema)


def test_raw_events_columns_cover_every_contract_field_once() -> None:
    columns = [name for name, _ in raw_event_columns()]
    assert len(columns) == len(set(columns))
    assert set(all_fields()) | {"event_type"} <= set(columns)
    types = dict(raw_event_columns())
    assert types["audio_seconds"] == "DECIMAL(18,6)"
    assert types["occurred_at"] == "TIMESTAMP"
    assert "DOUBLE" not in types.values() and "FLOAT" not in types.values()


def test_a_segment_over_an_hour_is_clock_skew_whatever_the_skew_setting() -> None:
    # With 2 h of skew allowed, a segment 30 min either side of occurred_at is near enough, but a
    # turn segment does not last an hour (SPEC 3): both paths say so.
    long = line(
        "turn.latency", started_at="2026-11-01T09:30:00.000Z", ended_at="2026-11-01T10:30:00.001Z"
    )
    hour = line(
        "turn.latency", started_at="2026-11-01T09:30:00.000Z", ended_at="2026-11-01T10:30:00.000Z"
    )
    sql = validation_sql("lines", clock_skew_minutes=120)
    rows = (
        lines_table([[long, hour]])
        .execute(
            f"select quarantine_reason, quarantine_detail from ({sql}) order by line_number",
            {"ingest_time": INGEST_TIME.isoformat()},
        )
        .fetchall()
    )
    assert rows == [("clock_skew", "ended_at"), (None, None)]
    assert verdict(long, INGEST_TIME, clock_skew_minutes=120) == ("clock_skew", "ended_at")
    assert verdict(hour, INGEST_TIME, clock_skew_minutes=120) is None
    assert verdict(hour, INGEST_TIME) == ("clock_skew", "started_at")
