"""Metering contract v1.2: the single source of truth for what an event is (SPEC section 3).

Everything else is derived from these models: the JSON Schema (`ledger schema`), the bulk
validation SQL of the ingest (`ledger.contract.fields`), the warehouse columns of `raw.events`, and
the dbt source columns (tested against them). Change a rule here and every consumer follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    TypeAdapter,
    model_validator,
)
from pydantic_core import PydanticCustomError, core_schema

# v1.1 adds `cost.reported` and `turn.shadow` (SPEC 9 and 11); v1.2 the optional token counts of
# `tts.usage` (SPEC 3). Every v1 and v1.1 event is still valid.
CONTRACT_VERSION = "v1.2"

# The textual forms the contract accepts. The bulk ingest applies the same patterns in SQL.
# RFC 3339 lets a specification require upper-case "T" and "Z" (section 5.6); this one does.
RFC3339_PATTERN = r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})"
DECIMAL_TEXT_PATTERN = r"-?[0-9]+(\.[0-9]+)?"


def _rfc3339_text(value: object) -> object:
    # Python callers may pass datetimes; from JSON only the RFC 3339 text form is an instant
    # (a bare number would be read as Unix time by a lax parser: refused instead).
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not re.fullmatch(RFC3339_PATTERN, value):
        raise PydanticCustomError(
            "timestamp_format",
            "expected an RFC 3339 timestamp with offset, e.g. 2026-11-01T08:00:00Z",
        )
    return value


def _decimal_text(value: object) -> object:
    if isinstance(value, str) and not re.fullmatch(DECIMAL_TEXT_PATTERN, value):
        raise PydanticCustomError("decimal_format", "expected a plain decimal such as 12.5")
    # Negative zero is `bad_value` in either spelling (SPEC 3), as the bulk ingest's pattern (no
    # sign) refuses it: Decimal("-0") >= 0 would pass, and -0 sent as a number would be stored 0.
    if isinstance(value, str) and re.fullmatch(r"-0+(\.0+)?", value):
        raise PydanticCustomError("negative_zero", "negative zero is not a quantity")
    return value


# Shared field types. Integers are JSON integers (never strings or booleans) and >= 0; decimals are
# JSON numbers or plain numeric strings, >= 0, with at most 6 decimal places (microsecond resolution
# for audio seconds; more would be silently rounded by any warehouse, so it is refused instead).
# A decimal JSON number is judged by its text as sent, like a string (no exponent, no more places):
# read as a float it would be the nearest double (`ledger.contract.verdict`, the ingest alike).
# Timestamps are RFC 3339 strings with an offset (Z or +08:00): a naive time is ambiguous.
# Free text has no place in the contract (SPEC 3): identifiers are printable ASCII without spaces,
# short codes a narrow alphabet. A card number or a sentence in `reason` is `bad_value`. Patterns are
# written unanchored (DuckDB's regexp_full_match anchors them) and anchored for pydantic.
IDENTIFIER_PATTERN = r"[!-~]{1,128}"
# A short code is 1-64 of [A-Za-z0-9_.:-] (the length is the field's) with at most 8 digits in all:
# a code such as `tts.timeout:504` or a date `20261120` passes, a card number (13-19 digits, with or
# without separators) or a phone number (10+) is `bad_value`. One regular expression (no
# look-around), so pydantic, Python's re and DuckDB's RE2 read it alike.
SHORT_CODE_MAX_DIGITS = 8
SHORT_CODE_PATTERN = rf"[A-Za-z_.:-]*(?:[0-9][A-Za-z_.:-]*){{0,{SHORT_CODE_MAX_DIGITS}}}"
CURRENCY_PATTERN = r"[A-Z]{3}"


def _anchored(pattern: str) -> str:
    return f"^{pattern}$"


# Personal data stays out of identifiers and short codes (SPEC 3): a value containing an e-mail
# address, a phone number (`+` or `00` and its digits), or a card number is `personal_data`
# (issue 26: all three passed as a `session_id` and reached the published facts). A card number has
# 15-19 digits, starts with 3-6 and passes the Luhn check, so an epoch timestamp in a machine id
# (`sess-1733300000000-42`) starts with 1 and is not one. It is written as one run of digits or
# grouped as cards are printed, 4-4-4-4 (and 1-3 more) or 4-6-5 with a space, dash, dot or
# underscore, standing apart (not glued to a letter or a digit on either side) or inside a word
# that is not hexadecimal (`card4111111111111111`, issue 41). Inside a hexadecimal id the
# digits are not a card: a collector's event id (32 hex characters of a SHA-256) held a Luhn-valid
# run of 15 digits in 240 of a million, and a UUID's digit-only groups (`...-2769-4480-9123-...`)
# in 176 events of a simulated month, before this rule; none with it. In a short
# code, two or more groups of four digits joined by a space, dash, dot or underscore are how a card
# is written (`card:4111.1111`): personal data too, however few digits. A phone number is `+` and
# 8-15 digits, or `00` (the international prefix) and 8-14 more standing apart, spaces, dots and
# brackets between them (`+1(415)555-2671`); a `00` number neither follows nor holds a dash, as
# the digit-only groups of a UUID do (`...-84c2-007211246356`). An
# e-mail address may have its `@` percent-encoded (`%40`); a SIP Call-ID is written like one
# (`a84b4c76e66710@pc33.atlanta.com`, RFC 3261) but its left part is a machine's, 12 or more hex
# characters or dashes, a digit among them, and it is not personal data. Every pattern reads
# alike in Python's re and DuckDB's RE2 (no look-around); `ledger.contract.fields` writes the same
# checks in SQL for the bulk ingest. Personal data wins over a value's other faults (length,
# alphabet): the operator learns that a producer leaks it, and the quarantine sample is redacted.
EMAIL_PATTERN = r"([A-Za-z0-9._%+-]+)(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
SIP_CALL_ID_LOCAL_PATTERN = r"[0-9A-Fa-f-]{12,}"
SIP_CALL_ID_MIN_DIGITS = 1
PHONE_PATTERN = (
    r"\+[0-9](?:[ ().-]{0,2}[0-9]){7,14}"
    r"|(?:^|[^0-9A-Za-z-])00[1-9](?:[ ().]{0,2}[0-9]){7,13}(?:[^0-9A-Za-z]|$)"
)
# A run of digits, or of digit groups, with what precedes it (the start, or a character neither
# letter nor digit) and the letter glued after it, if any: the run counts only without that letter.
PLAIN_RUN_PATTERN = r"(?:^|[^A-Za-z0-9])[0-9]+[A-Za-z]?"
GROUPED_RUN_PATTERN = r"(?:^|[^A-Za-z0-9])[0-9]+(?:[ ._-][0-9]+)*[A-Za-z]?"
CARD_GROUPING_PATTERN = (
    r"[0-9]{4}(?:[ ._-][0-9]{4}){3}(?:[ ._-][0-9]{1,3})?|[0-9]{4}[ ._-][0-9]{6}[ ._-][0-9]{5}"
)
CARD_GROUPS_PATTERN = r"(?:^|[^0-9])[0-9]{4}(?:[ ._-][0-9]{4})+(?:[^0-9]|$)"
# A word with a letter beyond hexadecimal's (`card4111111111111111`): the digit runs inside it are
# checked as cards, the runs inside a hexadecimal word are not.
LETTERED_WORD_PATTERN = r"[A-Za-z0-9]*[G-Zg-z][A-Za-z0-9]*"
CARD_MIN_DIGITS, CARD_MAX_DIGITS, CARD_FIRST_DIGITS = 15, 19, "3456"


def is_card_number(run: str) -> bool:
    """Digits (separators allowed) that are a card number: 15-19 digits, 3-6 first, Luhn."""
    digits = re.sub("[^0-9]", "", run)
    if not CARD_MIN_DIGITS <= len(digits) <= CARD_MAX_DIGITS or digits[0] not in CARD_FIRST_DIGITS:
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def card_numbers(text: str) -> list[str]:
    """The card numbers written in `text`, as written (plain runs, grouped runs, then the runs in
    a lettered word)."""
    found = []
    for runs, shape in (
        (PLAIN_RUN_PATTERN, "[0-9]+"),
        (GROUPED_RUN_PATTERN, CARD_GROUPING_PATTERN),
    ):
        for match in re.findall(runs, text):
            run = re.sub("^[^0-9]", "", match)
            if re.fullmatch(shape, run) and is_card_number(run):
                found.append(run)
    for word in re.findall(LETTERED_WORD_PATTERN, text):
        found += [run for run in re.findall("[0-9]+", word) if is_card_number(run)]
    return found


def is_sip_call_id_local_part(local: str) -> bool:
    """The left part of an address-shaped value that a SIP stack made (a Call-ID), not a mailbox."""
    digits = sum(char.isdigit() for char in local)
    return bool(re.fullmatch(SIP_CALL_ID_LOCAL_PATTERN, local)) and digits >= SIP_CALL_ID_MIN_DIGITS


def email_addresses(text: str) -> list[str]:
    """The e-mail addresses written in `text` (a SIP Call-ID is not one)."""
    return [
        match.group(0)
        for match in re.finditer(EMAIL_PATTERN, text)
        if not is_sip_call_id_local_part(match.group(1))
    ]


def has_personal_data(text: str, *, card_groups: bool = False) -> bool:
    if email_addresses(text) or re.search(PHONE_PATTERN, text):
        return True
    if card_groups and re.search(CARD_GROUPS_PATTERN, text):
        return True
    return bool(card_numbers(text))


@dataclass(frozen=True)
class NoPersonalData:
    """Field metadata: the value must hold no personal data (`card_groups`: the short-code rule).

    Checked before the field's length and pattern (a BeforeValidator), so it wins over them."""

    card_groups: bool = False

    def __get_pydantic_core_schema__(self, source: object, handler: object) -> object:
        card_groups = self.card_groups

        def check(value: object) -> object:
            if isinstance(value, str) and has_personal_data(value, card_groups=card_groups):
                raise PydanticCustomError("personal_data", "personal data is not allowed here")
            return value

        return core_schema.no_info_before_validator_function(check, handler(source))  # type: ignore[operator]


Identifier = Annotated[
    str,
    Field(min_length=1, max_length=128, pattern=_anchored(IDENTIFIER_PATTERN)),
    NoPersonalData(),
]
ShortCode = Annotated[
    str,
    Field(min_length=1, max_length=64, pattern=_anchored(SHORT_CODE_PATTERN)),
    NoPersonalData(card_groups=True),
]
CurrencyCode = Annotated[
    str, Field(min_length=3, max_length=3, pattern=_anchored(CURRENCY_PATTERN))
]
Count = Annotated[StrictInt, Field(ge=0, le=2**62)]
# A metered count (tokens, characters, images) is priced: at most 12 digits, as a decimal's integer
# part. One event of 2**62 tokens passed ingest and overflowed the pricing's DECIMAL arithmetic,
# failing every build (issue 26); every usage type at 999,999,999,999 builds and publishes.
MeteredCount = Annotated[StrictInt, Field(ge=0, le=10**12 - 1)]
Quantity = Annotated[
    Decimal, BeforeValidator(_decimal_text), Field(ge=0, max_digits=18, decimal_places=6)
]
Timestamp = Annotated[AwareDatetime, BeforeValidator(_rfc3339_text)]
# No event of a metered voice session happened before 2000 (SPEC 3): an earlier `occurred_at` (a
# zero value such as 0001-01-01 from an unset clock) is `bad_value`, not a date every report would
# have to survive (ISO weeks and calendar joins have nothing for year 1).
EARLIEST_OCCURRED_AT = datetime(2000, 1, 1, tzinfo=UTC)
OccurredAt = Annotated[Timestamp, Field(ge=EARLIEST_OCCURRED_AT)]

Scenario = Literal["customer_service", "companion", "hardware", "outbound", "other"]
Channel = Literal["pstn", "sip", "webrtc", "device"]
Pipeline = Literal["cascade", "realtime"]
EndReason = Literal["user_hangup", "agent_hangup", "transfer", "timeout", "error"]
Phase = Literal["greeting", "intake", "substantive", "closing"]
InfraUnit = Literal["path_minutes", "minutes", "gb"]
Segment = Literal["endpointing", "stt_final", "llm_ttft", "tts_first_frame", "network_playback"]
DegradationKind = Literal[
    "realtime_to_cascade", "asr_to_dtmf", "tts_filler", "vision_clamp", "provider_failover"
]
Component = Literal["asr", "llm", "tts", "realtime", "vision", "infra"]
ShadowKind = Literal["endpointing", "vad", "codec"]

SEGMENTS: tuple[str, ...] = Segment.__args__  # type: ignore[attr-defined]


class _EventBase(BaseModel):
    # `extra="forbid"`: no free text beyond the contract (no transcripts, no names).
    model_config = ConfigDict(extra="forbid", frozen=True)

    event_id: Identifier
    source: Identifier
    occurred_at: OccurredAt
    tenant_id: Identifier
    session_id: Identifier


class SessionStarted(_EventBase):
    event_type: Literal["session.started"]
    scenario: Scenario
    channel: Channel
    pipeline: Pipeline
    agent_id: Identifier | None = None
    language: ShortCode | None = None
    region: ShortCode | None = None


class SessionEnded(_EventBase):
    event_type: Literal["session.ended"]
    end_reason: EndReason


class AsrUsage(_EventBase):
    event_type: Literal["asr.usage"]
    provider: Identifier
    model: Identifier
    audio_seconds: Quantity
    turn_index: Count | None = None


class LlmUsage(_EventBase):
    event_type: Literal["llm.usage"]
    provider: Identifier
    model: Identifier
    turn_index: Count
    input_tokens: MeteredCount
    cached_input_tokens: MeteredCount
    output_tokens: MeteredCount
    phase: Phase | None = None
    route: ShortCode | None = None


class TtsUsage(_EventBase):
    event_type: Literal["tts.usage"]
    provider: Identifier
    model: Identifier
    turn_index: Count | None = None
    characters: MeteredCount
    audio_seconds: Quantity
    cache_hit: StrictBool = False
    # v1.2: what a token-billed TTS (gpt-4o-mini-tts) reports, input text and output audio tokens.
    # Absent where the framework reports none: such a line is priced per character (SPEC 4).
    input_tokens: MeteredCount | None = None
    output_audio_tokens: MeteredCount | None = None


class RealtimeUsage(_EventBase):
    event_type: Literal["realtime.usage"]
    provider: Identifier
    model: Identifier
    turn_index: Count | None = None
    input_audio_tokens: MeteredCount
    cached_input_audio_tokens: MeteredCount
    input_text_tokens: MeteredCount
    cached_input_text_tokens: MeteredCount
    output_audio_tokens: MeteredCount
    output_text_tokens: MeteredCount


class VisionUsage(_EventBase):
    event_type: Literal["vision.usage"]
    provider: Identifier
    model: Identifier
    turn_index: Count | None = None
    images: MeteredCount
    image_tokens: MeteredCount
    cache_hit: StrictBool = False


class InfraUsage(_EventBase):
    event_type: Literal["infra.usage"]
    provider: Identifier
    resource: Identifier
    quantity: Quantity
    unit: InfraUnit


class TurnInterrupted(_EventBase):
    event_type: Literal["turn.interrupted"]
    turn_index: Count
    wasted_output_tokens: MeteredCount
    wasted_tts_characters: MeteredCount
    is_false_interruption: StrictBool


class TurnLatency(_EventBase):
    event_type: Literal["turn.latency"]
    turn_index: Count
    segment: Segment
    started_at: Timestamp
    ended_at: Timestamp

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> TurnLatency:
        if self.ended_at < self.started_at:
            raise ValueError("ended_at must not be before started_at")
        return self


class SessionDegraded(_EventBase):
    event_type: Literal["session.degraded"]
    kind: DegradationKind
    turn_index: Count | None = None
    reason: ShortCode | None = None


class CostReported(_EventBase):
    """What a provider or platform says a session cost (SPEC 9): Vapi, Retell, a usage export."""

    event_type: Literal["cost.reported"]
    provider: Identifier
    component: Component
    amount: Quantity
    currency: CurrencyCode
    model: Identifier | None = None
    turn_index: Count | None = None
    item: ShortCode | None = None
    # A later report of the same cost line (session x component x provider x item) has a higher
    # revision and supersedes the earlier ones (SPEC 9); absent means 0.
    revision: Count | None = None


class TurnShadow(_EventBase):
    """What a candidate (endpointing model, VAD, codec) running in shadow would have decided (SPEC 11)."""

    event_type: Literal["turn.shadow"]
    turn_index: Count
    candidate: Identifier
    kind: ShadowKind
    endpointing_ms: Quantity
    would_interrupt: StrictBool
    is_false_interruption: StrictBool | None = None


EVENT_MODELS: tuple[type[_EventBase], ...] = (
    SessionStarted,
    SessionEnded,
    AsrUsage,
    LlmUsage,
    TtsUsage,
    RealtimeUsage,
    VisionUsage,
    InfraUsage,
    TurnInterrupted,
    TurnLatency,
    SessionDegraded,
    CostReported,
    TurnShadow,
)

EVENT_TYPES: tuple[str, ...] = tuple(
    model.model_fields["event_type"].annotation.__args__[0]  # type: ignore[union-attr]
    for model in EVENT_MODELS
)
MODEL_BY_EVENT_TYPE: dict[str, type[_EventBase]] = dict(zip(EVENT_TYPES, EVENT_MODELS, strict=True))

Event = Annotated[
    SessionStarted
    | SessionEnded
    | AsrUsage
    | LlmUsage
    | TtsUsage
    | RealtimeUsage
    | VisionUsage
    | InfraUsage
    | TurnInterrupted
    | TurnLatency
    | SessionDegraded
    | CostReported
    | TurnShadow,
    Field(discriminator="event_type"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def json_schema() -> dict:
    """The contract as JSON Schema (draft 2020-12), for emitters that validate before sending."""
    schema = EVENT_ADAPTER.json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"Voice session metering event ({CONTRACT_VERSION})"
    return schema


def utc(moment: datetime) -> datetime:
    """Naive UTC, the form timestamps take in the warehouse."""
    from datetime import UTC

    return moment.astimezone(UTC).replace(tzinfo=None)
