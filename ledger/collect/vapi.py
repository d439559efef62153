"""Vapi's `end-of-call-report` server message -> contract events (SPEC 9).

The report names the call (`call.id`, the session), when it started and ended, why it ended, and
`costs`: one entry per component with the usage behind it (transcriber minutes, model prompt and
completion tokens, voice characters, transport minutes) and its cost in US dollars. Each entry
becomes a usage event where it carries usage, and a `cost.reported` event for its amount; Vapi's own
per-minute fee has no usage and is reported cost of `infra` (a platform fee). Post-call analysis
(summary, structured data, success evaluation) and knowledge-base queries are `llm` usage with
their tokens; voicemail detection is `realtime` usage when a model heard the call (its audio and
text tokens), else a fee of `infra`. The tenant is the
call's (or its assistant's) `metadata.tenant_id`, or the webhook's configured tenant when it names
none; a `tenant_id` that is not a tenant id refuses the report (never billed to the default).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from ledger.collect.event_builder import (
    PayloadError,
    SessionEvents,
    decimal_text,
    identifier,
    metadata_tenant,
    non_negative_int,
    short_code,
    stable_id,
)

REPORT_TYPE = "end-of-call-report"

# Vapi's `endedReason` values are many and grow; these are the ones that say who hung up. Every
# other reason is a failure of some part of the call (`error`), except the timeouts below.
END_REASONS = {
    "customer-ended-call": "user_hangup",
    "assistant-ended-call": "agent_hangup",
    "assistant-said-end-call-phrase": "agent_hangup",
    "assistant-ended-call-after-message-spoken": "agent_hangup",
    "assistant-ended-call-with-hangup-task": "agent_hangup",
    "assistant-forwarded-call": "transfer",
    "silence-timed-out": "timeout",
    "exceeded-max-duration": "timeout",
    "customer-did-not-answer": "timeout",
    "voicemail": "agent_hangup",
}
CHANNELS = {"webCall": "webrtc", "inboundPhoneCall": "pstn", "outboundPhoneCall": "pstn"}
COMPONENTS = {
    "transcriber": "asr",
    "model": "llm",
    # Post-call analysis (summary, structured data, success evaluation) and knowledge-base queries
    # are LLM calls with their own tokens and model.
    "analysis": "llm",
    "knowledge-base": "llm",
    "voice": "tts",
    "transport": "infra",
    "vapi": "infra",
    # Voicemail detection by a model that hears the call (audio tokens) is realtime; by the
    # carrier (Twilio's answering-machine detection, no tokens) a per-call fee of infra.
    "voicemail-detection": "realtime",
}
# Cost entries whose model is the entry's `model` object, not an object named after the type.
MODEL_ENTRIES = ("analysis", "knowledge-base", "voicemail-detection")
VOICEMAIL_TOKENS = (
    "promptTextTokens",
    "promptAudioTokens",
    "completionTextTokens",
    "completionAudioTokens",
)


@dataclass(frozen=True)
class VapiOptions:
    source: str
    tenant_id: str
    scenario: str = "other"


def _parse_time(value: object, name: str) -> datetime:
    if not isinstance(value, str):
        raise PayloadError(f"message.{name} is missing (expected an ISO 8601 time)")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise PayloadError(f"message.{name} is not an ISO 8601 time") from exc


def _optional_identifier(value: object) -> str | None:
    return identifier(value, "") or None if value else None


def _metadata_tenant(message: dict, call: dict, fallback: str) -> str:
    """The tenant the call's (or its assistant's) metadata names, else the webhook's."""
    holders = {
        "message.call": call,
        "message.assistant": message.get("assistant") or {},
        "message.call.assistant": call.get("assistant") or {},
    }
    for where, holder in holders.items():
        metadata = holder.get("metadata") if isinstance(holder, dict) else None
        if isinstance(metadata, dict) and metadata.get("tenant_id"):
            return metadata_tenant(metadata["tenant_id"], fallback, f"{where}.metadata.tenant_id")
    return fallback


def _service(entry: dict, kind: str) -> tuple[str, str | None]:
    """(provider, model) of a cost entry; the nested object is named after the entry's type."""
    nested = entry.get(kind) if isinstance(entry.get(kind), dict) else {}
    if kind in MODEL_ENTRIES and isinstance(entry.get("model"), dict):
        nested = entry["model"]
    provider = identifier(nested.get("provider") or entry.get("provider"), "vapi")
    model = nested.get("model") or nested.get("voiceId")
    if kind in ("vapi", "transport") and model is None:
        model = entry.get("subType") or kind
    return provider, identifier(model, "unknown") if model is not None else None


def events_from_report(payload: dict[str, Any], options: VapiOptions) -> list[dict]:
    """The contract events of one end-of-call report; [] for any other server message."""
    message = payload.get("message") if isinstance(payload, dict) else None
    if not isinstance(message, dict):
        raise PayloadError("expected an object with `message`")
    if message.get("type") != REPORT_TYPE:
        return []
    call = message.get("call") if isinstance(message.get("call"), dict) else {}
    call_id = call.get("id")
    if not call_id:
        raise PayloadError("message.call.id is missing")
    started = _parse_time(message.get("startedAt") or call.get("startedAt"), "startedAt")
    ended = _parse_time(message.get("endedAt") or call.get("endedAt"), "endedAt")
    session = SessionEvents(
        source=options.source,
        tenant_id=_metadata_tenant(message, call, options.tenant_id),
        session_id=identifier(call_id, stable_id("vapi", call_id)),
    )
    reason = str(message.get("endedReason") or call.get("endedReason") or "")
    events = [
        session.event(
            "session.started",
            started,
            ("start",),
            scenario=options.scenario,
            channel=CHANNELS.get(call.get("type"), "webrtc"),
            pipeline="cascade",
            agent_id=_optional_identifier(call.get("assistantId")),
        ),
        session.event(
            "session.ended", ended, ("end",), end_reason=END_REASONS.get(reason, "error")
        ),
    ]
    costs = message.get("costs") if isinstance(message.get("costs"), list) else []
    web = call.get("type") == "webCall"
    for index, entry in enumerate(costs):
        if isinstance(entry, dict):
            events.extend(_cost_entry_events(session, ended, index, entry, web))
    return events


def _cost_entry_events(
    session: SessionEvents, at: datetime, index: int, entry: dict, web: bool
) -> list[dict]:
    kind = str(entry.get("type") or "other")
    component = COMPONENTS.get(kind, "infra")
    if kind == "voicemail-detection" and not any(entry.get(name) for name in VOICEMAIL_TOKENS):
        component = "infra"
    provider, model = _service(entry, kind)
    events: list[dict] = []
    usage = _usage(session, at, (index, kind, provider, model, web), entry)
    if usage is not None:
        events.append(usage)
    if entry.get("cost") is not None:
        events.append(
            session.event(
                "cost.reported",
                at,
                ("cost", index),
                provider=provider,
                component=component,
                amount=decimal_text(entry["cost"]),
                currency="USD",
                model=model,
                item=short_code(_item(kind, entry)),
            )
        )
    return events


def _item(kind: str, entry: dict) -> str:
    """The cost line's name: its type, and its sub-type or analysis type (`analysis.summary`)."""
    detail = entry.get("subType") or entry.get("analysisType")
    return f"{kind}.{detail}" if detail else kind


def _usage(
    session: SessionEvents, at: datetime, what: tuple[int, str, str, str | None, bool], entry: dict
) -> dict | None:
    index, kind, provider, model, web = what
    key = ("usage", index)
    if kind == "transcriber" and entry.get("minutes") is not None:
        seconds = Decimal(str(entry["minutes"])) * 60
        return session.event(
            "asr.usage",
            at,
            key,
            provider=provider,
            model=model or "unknown",
            audio_seconds=decimal_text(seconds),
        )
    if kind in ("model", "analysis", "knowledge-base"):
        prompt = non_negative_int(entry.get("promptTokens"))
        # Vapi's promptTokens include the cached ones (as the providers it relays count them).
        cached = min(non_negative_int(entry.get("cachedPromptTokens")), prompt)
        return session.event(
            "llm.usage",
            at,
            key,
            provider=provider,
            model=model or "unknown",
            turn_index=0,
            input_tokens=prompt - cached,
            cached_input_tokens=cached,
            output_tokens=non_negative_int(entry.get("completionTokens")),
        )
    if kind == "voice" and entry.get("characters") is not None:
        return session.event(
            "tts.usage",
            at,
            key,
            provider=provider,
            model=model or "unknown",
            characters=non_negative_int(entry["characters"]),
            audio_seconds="0",  # Vapi reports no audio length per voice; TTS is priced by characters
        )
    if kind == "voicemail-detection" and any(entry.get(name) for name in VOICEMAIL_TOKENS):
        prompt_audio = non_negative_int(entry.get("promptAudioTokens"))
        completion_audio = non_negative_int(entry.get("completionAudioTokens"))
        return session.event(
            "realtime.usage",
            at,
            key,
            provider=provider,
            model=model or "unknown",
            input_audio_tokens=prompt_audio,
            cached_input_audio_tokens=0,
            input_text_tokens=non_negative_int(entry.get("promptTextTokens")),
            cached_input_text_tokens=0,
            output_audio_tokens=completion_audio,
            output_text_tokens=non_negative_int(entry.get("completionTextTokens")),
        )
    if kind == "transport" and entry.get("minutes") is not None:
        return session.event(
            "infra.usage",
            at,
            key,
            provider=provider,
            # A phone call's transport is a PSTN path; a web call's is the media server's minutes.
            resource="sfu" if web else "pstn",
            quantity=decimal_text(Decimal(str(entry["minutes"]))),
            unit="minutes" if web else "path_minutes",
        )
    return None
