"""Metering contract v1: the single source of truth for what an event is (SPEC section 3).

Everything else is derived from these models: the JSON Schema (`ledger schema`), the bulk
validation SQL of the ingest (`ledger.contract.fields`), the warehouse columns of `raw.events`, and
the dbt source columns (tested against them). Change a rule here and every consumer follows.
"""

from __future__ import annotations

import re
from datetime import datetime
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
from pydantic_core import PydanticCustomError

CONTRACT_VERSION = "v1"

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
    return value


# Shared field types. Integers are JSON integers (never strings or booleans) and >= 0; decimals are
# JSON numbers or plain numeric strings, >= 0, with at most 6 decimal places (microsecond resolution
# for audio seconds; more would be silently rounded by any warehouse, so it is refused instead).
# Timestamps are RFC 3339 strings with an offset (Z or +08:00): a naive time is ambiguous.
Identifier = Annotated[str, Field(min_length=1, max_length=128)]
Label = Annotated[str, Field(min_length=1, max_length=128)]
Count = Annotated[StrictInt, Field(ge=0, le=2**62)]
Quantity = Annotated[
    Decimal, BeforeValidator(_decimal_text), Field(ge=0, max_digits=18, decimal_places=6)
]
Timestamp = Annotated[AwareDatetime, BeforeValidator(_rfc3339_text)]

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

SEGMENTS: tuple[str, ...] = Segment.__args__  # type: ignore[attr-defined]


class _EventBase(BaseModel):
    # `extra="forbid"`: no free text beyond the contract (no transcripts, no names).
    model_config = ConfigDict(extra="forbid", frozen=True)

    event_id: Identifier
    source: Identifier
    occurred_at: Timestamp
    tenant_id: Label
    session_id: Label


class SessionStarted(_EventBase):
    event_type: Literal["session.started"]
    scenario: Scenario
    channel: Channel
    pipeline: Pipeline
    agent_id: Label | None = None
    language: Label | None = None
    region: Label | None = None


class SessionEnded(_EventBase):
    event_type: Literal["session.ended"]
    end_reason: EndReason


class AsrUsage(_EventBase):
    event_type: Literal["asr.usage"]
    provider: Label
    model: Label
    audio_seconds: Quantity
    turn_index: Count | None = None


class LlmUsage(_EventBase):
    event_type: Literal["llm.usage"]
    provider: Label
    model: Label
    turn_index: Count
    input_tokens: Count
    cached_input_tokens: Count
    output_tokens: Count
    phase: Phase | None = None
    route: Label | None = None


class TtsUsage(_EventBase):
    event_type: Literal["tts.usage"]
    provider: Label
    model: Label
    turn_index: Count | None = None
    characters: Count
    audio_seconds: Quantity
    cache_hit: StrictBool = False


class RealtimeUsage(_EventBase):
    event_type: Literal["realtime.usage"]
    provider: Label
    model: Label
    turn_index: Count | None = None
    input_audio_tokens: Count
    cached_input_audio_tokens: Count
    input_text_tokens: Count
    cached_input_text_tokens: Count
    output_audio_tokens: Count
    output_text_tokens: Count


class VisionUsage(_EventBase):
    event_type: Literal["vision.usage"]
    provider: Label
    model: Label
    turn_index: Count | None = None
    images: Count
    image_tokens: Count
    cache_hit: StrictBool = False


class InfraUsage(_EventBase):
    event_type: Literal["infra.usage"]
    provider: Label
    resource: Label
    quantity: Quantity
    unit: InfraUnit


class TurnInterrupted(_EventBase):
    event_type: Literal["turn.interrupted"]
    turn_index: Count
    wasted_output_tokens: Count
    wasted_tts_characters: Count
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
    reason: Label | None = None


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
    | SessionDegraded,
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
