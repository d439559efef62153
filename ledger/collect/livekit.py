"""LiveKit Agents (1.x) -> contract events: attach to an `AgentSession` in two lines.

    collector = LiveKitCollector(FileSink(landing), tenant_id="acme", session_id=ctx.job.room.sid)
    collector.attach(session)            # before `await session.start(...)`

The session id is the room's SID (opaque, one per room session), never the room's name: a SIP
room's name carries the caller's phone number. Left out, it is taken from the job the session
runs in (`get_job_context().job.room.sid`) when attaching.

What the session already emits becomes contract events:
- `session_usage_updated` (cumulative usage per provider and model) -> per-call deltas as
  `llm.usage` / `realtime.usage` / `asr.usage` / `tts.usage`. LiveKit's prompt tokens include the
  cached ones; the contract's buckets are exclusive, so the cached part is taken out. A TTS that
  reports tokens (OpenAI's gpt-4o-mini-tts) keeps them on `tts.usage` (`input_tokens`,
  `output_audio_tokens`), next to its characters.
- `metrics_collected` -> which request and turn a usage delta belongs to (its `request_id` and
  `speech_id` make the event ids, so a re-sent report deduplicates), and the latency segments it
  measures: `stt_final` and `endpointing` from end-of-utterance metrics, `llm_ttft` from LLM (or
  realtime) time to first token, `tts_first_frame` from TTS time to first byte. LiveKit does not
  measure network playback, so that segment is absent (and the turn has no first-audio total).
- `agent_false_interruption` and an interrupted assistant message -> `turn.interrupted`.
- attaching -> `session.started`; `close` -> `session.ended` (and the sink is flushed).
Turns are numbered in the order their `speech_id`s first appear.
Providers are named by `ledger.collect.naming` from the plugin objects the session holds (their
endpoint host, else their package); `services` overrides a kind's provider and model.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ledger.collect.event_builder import (
    SessionEvents,
    decimal_text,
    from_unix,
    identifier,
    non_negative_int,
    timestamp_text,
)
from ledger.collect.naming import DeclaredNames, Service, endpoint_of, name_service
from ledger.collect.sink import Sink

# LiveKit's CloseReason values -> the contract's end reasons.
END_REASONS = {
    "participant_disconnected": "user_hangup",
    "user_initiated": "agent_hangup",
    "task_completed": "agent_hangup",
    "job_shutdown": "agent_hangup",
    "error": "error",
}
# Numeric fields of LiveKit's cumulative ModelUsage objects, kept to turn them into deltas.
_USAGE_FIELDS = (
    "input_tokens",
    "input_cached_tokens",
    "input_audio_tokens",
    "input_cached_audio_tokens",
    "input_text_tokens",
    "input_cached_text_tokens",
    "output_tokens",
    "output_audio_tokens",
    "output_text_tokens",
    "characters_count",
    "audio_duration",
)


@dataclass
class LiveKitCollector:
    sink: Sink
    tenant_id: str
    session_id: str | None = None  # None: the SID of the room of the job running the session
    source: str = "livekit"
    scenario: str = "other"
    channel: str = "webrtc"
    pipeline: str = "cascade"
    agent_id: str | None = None
    # (provider, model) per kind ("llm", "stt", "tts", "realtime"): always wins over what the
    # session reports (a model of "" or None keeps the reported one).
    services: dict[str, tuple[str, str]] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    _turns: dict[str, int] = field(default_factory=dict, init=False)
    _usage: dict[tuple, dict[str, float]] = field(default_factory=dict, init=False)
    _latency_seen: set[tuple[int, str]] = field(default_factory=set, init=False)
    _false_turns: set[int] = field(default_factory=set, init=False)
    _seen_keys: Counter = field(default_factory=Counter, init=False)
    _last: Any = field(default=None, init=False)  # the metrics behind the next usage update
    _ended: bool = field(default=False, init=False)
    _session: Any = field(default=None, init=False)
    _events: Any = field(default=None, init=False)
    # Overrides naming another model than the session reports (warned once each).
    declared_names: DeclaredNames = field(init=False)

    def __post_init__(self) -> None:
        self.declared_names = DeclaredNames(self.session_id or "(the job's room)")
        if self.session_id is not None:
            self._events = SessionEvents(self.source, self.tenant_id, self.session_id)

    def attach(self, session: Any) -> LiveKitCollector:
        """Listen to `session` (a livekit.agents AgentSession) and record its start now."""
        if self._events is None:
            self.session_id = _job_room_sid()
            self._events = SessionEvents(self.source, self.tenant_id, self.session_id)
        self._session = session
        session.on("metrics_collected", lambda ev: self.on_metrics(ev.metrics))
        session.on("session_usage_updated", lambda ev: self.on_usage(ev.usage.model_usage))
        session.on("agent_false_interruption", self.on_false_interruption)
        session.on("conversation_item_added", self.on_item_added)
        session.on("close", self.on_close)
        self._emit(
            "session.started",
            self.clock(),
            ("start",),
            scenario=self.scenario,
            channel=self.channel,
            pipeline=self.pipeline,
            agent_id=self.agent_id,
        )
        return self

    # -- turns --------------------------------------------------------------------------------

    def _turn(self, speech_id: str | None) -> int:
        if speech_id is None:
            return max(self._turns.values(), default=0)
        return self._turns.setdefault(speech_id, len(self._turns))

    def _emit(self, event_type: str, at: float, key: tuple, **fields: Any) -> None:
        self.sink.emit(self._events.event(event_type, from_unix(at), key, **fields))

    def _service(self, kind: str, provider: str | None, model: str | None) -> tuple[str, str]:
        plugin = self._plugin(kind, provider, model)
        seen = Service(
            reported_provider=provider,
            reported_model=model,
            package=type(plugin).__module__ if plugin is not None else None,
            endpoint=endpoint_of(plugin) if plugin is not None else None,
        )
        self.declared_names.check(kind, model, self.services.get(kind))
        named_provider, named_model = name_service(seen, self.services.get(kind))
        return identifier(named_provider, "unknown"), identifier(named_model, "unknown")

    def _plugin(self, kind: str, provider: str | None, model: str | None) -> Any:
        """The session's (or its current agent's) plugin object that reported as `provider` and
        `model`, looked for through LiveKit's stream and fallback adapters; None if none did."""
        attribute = {"realtime": "llm", "stt": "stt", "tts": "tts"}.get(kind, "llm")
        roots = [getattr(self._session, attribute, None)]
        try:
            roots.append(getattr(self._session.current_agent, attribute, None))
        except (AttributeError, RuntimeError):  # no agent yet, or no session attached
            pass
        for plugin in _plugins(roots):
            try:
                if (plugin.provider, plugin.model) == (provider, model):
                    return plugin
            except (AttributeError, NotImplementedError):
                continue
        return None

    # -- metrics: latency, and which request the next usage delta belongs to ----------------

    def on_metrics(self, metrics: Any) -> None:
        kind = getattr(metrics, "type", "")
        if kind in ("llm_metrics", "tts_metrics", "stt_metrics", "realtime_model_metrics"):
            self._last = metrics
        speech_id = getattr(metrics, "speech_id", None)
        end = float(metrics.timestamp)
        if kind == "eou_metrics" and metrics.end_of_utterance_delay > 0:
            turn = self._turn(speech_id)
            speech_end = end - metrics.end_of_utterance_delay
            transcribed = min(speech_end + max(metrics.transcription_delay, 0.0), end)
            self._latency(turn, speech_id, "stt_final", speech_end, transcribed)
            self._latency(turn, speech_id, "endpointing", transcribed, end)
        elif kind in ("llm_metrics", "realtime_model_metrics") and metrics.ttft >= 0:
            start = end - metrics.duration
            turn = self._turn(speech_id)
            self._latency(turn, speech_id, "llm_ttft", start, start + metrics.ttft)
        elif kind == "tts_metrics" and metrics.ttfb >= 0:
            start = end - metrics.duration
            turn = self._turn(speech_id)
            self._latency(turn, speech_id, "tts_first_frame", start, start + metrics.ttfb)

    def _latency(
        self, turn: int, speech_id: str | None, segment: str, start: float, end: float
    ) -> None:
        # The first measurement of a segment in a turn is the turn's (a tool call's second LLM
        # request is not the user's wait for the first token).
        if (turn, segment) in self._latency_seen:
            return
        self._latency_seen.add((turn, segment))
        self._emit(
            "turn.latency",
            end,
            ("latency", speech_id or turn, segment),
            turn_index=turn,
            segment=segment,
            started_at=timestamp_text(from_unix(start)),
            ended_at=timestamp_text(from_unix(max(end, start))),
        )

    # -- usage: cumulative per (kind, provider, model) -> deltas ---------------------------------

    def on_usage(self, model_usage: list[Any]) -> None:
        last = self._last
        request = getattr(last, "request_id", None) or f"update-{len(self._usage)}"
        at = float(getattr(last, "timestamp", None) or self.clock())
        for usage in model_usage:
            key = (usage.type, usage.provider, usage.model)
            now = {name: getattr(usage, name, 0) or 0 for name in _USAGE_FIELDS}
            before = self._usage.get(key, {})
            self._usage[key] = now
            delta = {name: now[name] - before.get(name, 0) for name in _USAGE_FIELDS}
            if any(value > 0 for value in delta.values()):
                # A request id may repeat (a plugin without one reports "unknown"): the n-th
                # delta under the same id gets its own event id, the same one on every re-send.
                self._seen_keys[(request, *key)] += 1
                ident = (request, *key, self._seen_keys[(request, *key)])
                self._usage_event(usage, delta, last, ident, at)

    def _usage_event(self, usage: Any, d: dict, last: Any, key: tuple, at: float) -> None:
        speech_id = getattr(last, "speech_id", None)
        realtime = getattr(last, "type", "") == "realtime_model_metrics" or (
            d["input_audio_tokens"] > 0 or d["output_audio_tokens"] > 0
        )
        if usage.type == "llm_usage" and realtime:
            provider, model = self._service("realtime", usage.provider, usage.model)
            self._emit(
                "realtime.usage",
                at,
                key,
                provider=provider,
                model=model,
                turn_index=self._turn(speech_id),
                input_audio_tokens=non_negative_int(
                    d["input_audio_tokens"] - d["input_cached_audio_tokens"]
                ),
                cached_input_audio_tokens=non_negative_int(d["input_cached_audio_tokens"]),
                input_text_tokens=non_negative_int(
                    d["input_text_tokens"] - d["input_cached_text_tokens"]
                ),
                cached_input_text_tokens=non_negative_int(d["input_cached_text_tokens"]),
                output_audio_tokens=non_negative_int(d["output_audio_tokens"]),
                output_text_tokens=non_negative_int(d["output_text_tokens"]),
            )
        elif usage.type == "llm_usage":
            provider, model = self._service("llm", usage.provider, usage.model)
            self._emit(
                "llm.usage",
                at,
                key,
                provider=provider,
                model=model,
                turn_index=self._turn(speech_id),
                # LiveKit's prompt tokens include the cached ones: the contract's do not.
                input_tokens=non_negative_int(d["input_tokens"] - d["input_cached_tokens"]),
                cached_input_tokens=non_negative_int(d["input_cached_tokens"]),
                output_tokens=non_negative_int(d["output_tokens"]),
            )
        elif usage.type == "tts_usage":
            provider, model = self._service("tts", usage.provider, usage.model)
            self._emit(
                "tts.usage",
                at,
                key,
                provider=provider,
                model=model,
                turn_index=self._turn(speech_id),
                characters=non_negative_int(d["characters_count"]),
                audio_seconds=decimal_text(d["audio_duration"]),
                **_tts_token_counts(d),
            )
        elif usage.type == "stt_usage" and d["audio_duration"] > 0:
            provider, model = self._service("stt", usage.provider, usage.model)
            self._emit(
                "asr.usage",
                at,
                key,
                provider=provider,
                model=model,
                audio_seconds=decimal_text(d["audio_duration"]),
            )

    # -- interruptions and the end ------------------------------------------------------------

    def on_false_interruption(self, event: Any) -> None:
        turn = self._turn(None)
        self._false_turns.add(turn)
        self._emit(
            "turn.interrupted",
            float(event.created_at),
            ("false_interruption", turn, event.created_at),
            turn_index=turn,
            wasted_output_tokens=0,
            wasted_tts_characters=0,
            is_false_interruption=True,
        )

    def on_item_added(self, event: Any) -> None:
        item = event.item
        if getattr(item, "role", None) != "assistant" or not getattr(item, "interrupted", False):
            return
        turn = self._turn(None)
        if turn in self._false_turns:
            return  # already recorded as the false interruption it was
        self._emit(
            "turn.interrupted",
            float(event.created_at),
            ("interrupted", item.id),
            turn_index=turn,
            # LiveKit does not say how much of the reply was generated but not played.
            wasted_output_tokens=0,
            wasted_tts_characters=0,
            is_false_interruption=False,
        )

    def on_close(self, event: Any) -> None:
        if self._ended:
            return
        self._ended = True
        reason = getattr(event.reason, "value", event.reason)
        self._emit(
            "session.ended",
            float(event.created_at),
            ("end",),
            end_reason=END_REASONS.get(str(reason), "error"),
        )
        flush = getattr(self.sink, "flush", None)
        if flush is not None:
            flush()


def _tts_token_counts(delta: dict) -> dict[str, int]:
    """A token-billed TTS's counts (contract v1.2: input text, output audio tokens), kept so that
    the rate card can price it per token. LiveKit reports 0 for a TTS that counts no tokens: then
    the fields are left out, and the line is priced per character (SPEC 4)."""
    if delta["input_tokens"] <= 0 and delta["output_tokens"] <= 0:
        return {}
    return {
        "input_tokens": non_negative_int(delta["input_tokens"]),
        "output_audio_tokens": non_negative_int(delta["output_tokens"]),
    }


# Where LiveKit's adapters keep the plugins they wrap (stream adapters, fallback adapters).
_WRAPPED = ("_stt", "_tts", "_llm", "_wrapped_stt", "_wrapped_tts")
_WRAPPED_LISTS = ("_stt_instances", "_tts_instances", "_llm_instances")


def _plugins(roots: list[Any]) -> list[Any]:
    found: list[Any] = []
    todo = [root for root in roots if root is not None]
    while todo and len(found) < 32:
        plugin = todo.pop(0)
        if any(plugin is seen for seen in found) or not hasattr(plugin, "provider"):
            continue
        found.append(plugin)
        todo.extend(getattr(plugin, name, None) for name in _WRAPPED)
        for name in _WRAPPED_LISTS:
            todo.extend(getattr(plugin, name, None) or ())
        todo = [item for item in todo if item is not None]
    return found


def _job_room_sid() -> str:
    """The SID of the room of the LiveKit job running now (set when the job is dispatched)."""
    from livekit.agents import get_job_context

    context = get_job_context(required=False)
    sid = context.job.room.sid if context is not None else ""
    if not sid:
        raise ValueError(
            "LiveKitCollector needs session_id outside a LiveKit job (e.g. ctx.job.room.sid)"
        )
    return sid
