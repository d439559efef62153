"""Retell's `call_ended` / `call_analyzed` webhooks -> contract events (SPEC 9).

The call object names the session (`call_id`), its start and end (Unix milliseconds), why it ended
(`disconnection_reason`) and `call_cost`: one entry per product with its cost in **cents**, converted
here to US dollars. Retell reports no per-provider usage the ledger can price (its LLM token counts
are totals without an input/output split), so a Retell call is priced by its reported cost: each
product is `cost.reported` of the component its name says (`*_tts` -> tts, an LLM name -> llm, ...),
and the platform's own fee is `infra`. Both webhooks carry the same call, under `event` or
`event_type`: its session events have the same ids, so the second delivery deduplicates; the costs
of the analysed call (`call_analyzed`, with `call_analysis`) are `revision` 1 and supersede
call_ended's in the ledger (SPEC 9), so a changed figure is a restatement, never an `id_conflict`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from ledger.collect.event_builder import (
    PayloadError,
    SessionEvents,
    decimal_text,
    from_unix,
    identifier,
    metadata_tenant,
    short_code,
    stable_id,
)

CALL_EVENTS = ("call_ended", "call_analyzed")
CENTS = Decimal(100)

END_REASONS = {
    "user_hangup": "user_hangup",
    "agent_hangup": "agent_hangup",
    "call_transfer": "transfer",
    "voicemail_reached": "agent_hangup",
    "inactivity": "timeout",
    "max_duration_reached": "timeout",
    "dial_no_answer": "timeout",
    "registered_call_timeout": "timeout",
}
CHANNELS = {"web_call": "webrtc", "phone_call": "pstn"}

# A product name's words -> component. Retell names products after the vendor and the service
# (`elevenlabs_tts`, `deepgram_stt`, `gpt_4o_mini`, `retell_platform`); unknown names are infra.
_COMPONENT_WORDS = (
    ("tts", "tts"),
    ("voice", "tts"),
    ("stt", "asr"),
    ("asr", "asr"),
    ("transcri", "asr"),
    ("realtime", "realtime"),
    ("gpt", "llm"),
    ("claude", "llm"),
    ("gemini", "llm"),
    ("llm", "llm"),
    ("llama", "llm"),
    ("deepseek", "llm"),
)
_LLM_VENDORS = {"gpt": "openai", "claude": "anthropic", "gemini": "google", "llama": "meta"}


@dataclass(frozen=True)
class RetellOptions:
    source: str
    tenant_id: str
    scenario: str = "other"
    # Exact product names -> (component, provider, model), for what the name rules get wrong.
    products: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)


def product_service(product: str, options: RetellOptions) -> tuple[str, str, str | None]:
    """(component, provider, model) of a Retell product name."""
    if product in options.products:
        return options.products[product]
    name = product.lower()
    component = next((c for word, c in _COMPONENT_WORDS if word in name), "infra")
    head = re.split(r"[_\-\s]", name, maxsplit=1)[0]
    if component == "llm":
        provider = next((v for word, v in _LLM_VENDORS.items() if name.startswith(word)), head)
        return component, identifier(provider, "retell"), identifier(product, "unknown")
    return component, identifier(head, "retell"), None


def _time(call: dict, name: str) -> datetime:
    value = call.get(name)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise PayloadError(f"call.{name} is missing (expected Unix milliseconds)")
    return from_unix(value / 1000)


def events_from_webhook(payload: dict[str, Any], options: RetellOptions) -> list[dict]:
    """The contract events of a call_ended / call_analyzed webhook; [] for any other event."""
    if not isinstance(payload, dict) or not isinstance(payload.get("call"), dict):
        raise PayloadError("expected an object with `event` and `call`")
    # Retell's pages show the name under `event` and, for post-call analysis, `event_type`.
    if (payload.get("event") or payload.get("event_type")) not in CALL_EVENTS:
        return []
    call = payload["call"]
    call_id = call.get("call_id")
    if not call_id:
        raise PayloadError("call.call_id is missing")
    started, ended = _time(call, "start_timestamp"), _time(call, "end_timestamp")
    metadata = call.get("metadata") if isinstance(call.get("metadata"), dict) else {}
    session = SessionEvents(
        source=options.source,
        tenant_id=metadata_tenant(
            metadata.get("tenant_id"), options.tenant_id, "call.metadata.tenant_id"
        ),
        session_id=identifier(call_id, stable_id("retell", call_id)),
    )
    scenario = "outbound" if call.get("direction") == "outbound" else options.scenario
    events = [
        session.event(
            "session.started",
            started,
            ("start",),
            scenario=scenario,
            channel=CHANNELS.get(call.get("call_type"), "webrtc"),
            pipeline="cascade",
            agent_id=identifier(call.get("agent_id"), "") or None,
        ),
        session.event(
            "session.ended",
            ended,
            ("end",),
            end_reason=END_REASONS.get(str(call.get("disconnection_reason")), "error"),
        ),
    ]
    cost = call.get("call_cost") if isinstance(call.get("call_cost"), dict) else {}
    # The call as analysed (it carries `call_analysis`) is a later report of the same costs: its
    # figures supersede call_ended's (revision 1, its own event ids), never conflict with them.
    revision = 1 if isinstance(call.get("call_analysis"), dict) and call["call_analysis"] else 0
    for entry in cost.get("product_costs") or []:
        if not isinstance(entry, dict) or entry.get("cost") is None or not entry.get("product"):
            continue
        product = str(entry["product"])
        component, provider, model = product_service(product, options)
        events.append(
            session.event(
                "cost.reported",
                ended,
                ("cost", product) if revision == 0 else ("cost", product, "revision", revision),
                provider=provider,
                component=component,
                amount=decimal_text(Decimal(str(entry["cost"])) / CENTS),
                currency="USD",
                model=model,
                item=short_code(product),
                revision=revision or None,
            )
        )
    return events
