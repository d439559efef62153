"""Pipecat (1.x) -> contract events: an observer for a `PipelineTask`.

    collector = PipecatCollector(FileSink(landing), tenant_id="acme", session_id=call_id)
    task = PipelineTask(pipeline, params=PipelineParams(enable_metrics=True,
                        enable_usage_metrics=True), observers=[collector])

Pipecat services push `MetricsFrame`s; this observer turns them into contract events:
- LLM token usage -> `llm.usage` (or `realtime.usage` when it counts audio tokens). Services
  differ in whether `prompt_tokens` includes the cache reads; `total_tokens` is gross either way,
  so the exclusive input is `total - completion - cache reads` for every service.
- TTS characters -> `tts.usage`; STT audio seconds -> `asr.usage`. Pipecat's TTS usage metrics
  count characters only (no tokens, up to 1.14), so a token-billed TTS such as gpt-4o-mini-tts
  is priced per character under Pipecat; the LiveKit collector keeps the tokens LiveKit reports.
- TTFB of the STT, LLM and TTS services -> `stt_final`, `llm_ttft`, `tts_first_frame` latency
  segments (the first of each per turn); a turn detector's end-to-end processing time ->
  `endpointing`. Pipecat measures no network playback, so that segment is absent.
- An `InterruptionFrame` while the bot speaks -> `turn.interrupted`.
- `StartFrame` -> `session.started`; `EndFrame` / `CancelFrame` -> `session.ended` (sink flushed).
Pipecat names processors, not providers: the provider is the host of the service's endpoint
where it is a known provider's (an OpenAI service pointed at Groq is `groq`), else the service's
package (`pipecat.services.openai...` -> `openai`), and the model the one its metrics name
(`ledger.collect.naming`). `services` (per processor name, else per kind "llm", "stt", "tts",
"realtime") always wins; a model of "" or None there keeps the reported one, and a model that
disagrees with the reported one is warned about once (`declared_names`).
A new turn starts when the user starts speaking after the previous turn recorded anything.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    CancelFrame,
    EndFrame,
    InterruptionFrame,
    MetricsFrame,
    StartFrame,
    UserStartedSpeakingFrame,
)
from pipecat.metrics.metrics import (
    LLMUsageMetricsData,
    STTUsageMetricsData,
    TTFBMetricsData,
    TTSUsageMetricsData,
    TurnMetricsData,
)
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.services.llm_service import LLMService
from pipecat.services.stt_service import STTService
from pipecat.services.tts_service import TTSService

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

TTFB_SEGMENTS = {"stt": "stt_final", "llm": "llm_ttft", "tts": "tts_first_frame"}


def _kind(service: Any) -> str:
    if isinstance(service, LLMService):
        return "llm"
    if isinstance(service, TTSService):
        return "tts"
    if isinstance(service, STTService):
        return "stt"
    return "other"


class PipecatCollector(BaseObserver):
    def __init__(
        self,
        sink: Sink,
        *,
        tenant_id: str,
        session_id: str,
        source: str = "pipecat",
        scenario: str = "other",
        channel: str = "webrtc",
        pipeline: str = "cascade",
        services: dict[str, tuple[str, str]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(observe_every_push=False)
        self.sink = sink
        self.scenario, self.channel, self.pipeline = scenario, channel, pipeline
        self.services = services or {}
        self.clock = clock
        self._events = SessionEvents(source, tenant_id, session_id)
        self.declared_names = DeclaredNames(session_id)
        self._turn = 0
        self._turn_recorded = False
        self._bot_speaking = False
        self._speaking_turn = 0
        self._started = self._ended = False
        self._latency_seen: set[tuple[int, str]] = set()
        self._occurrences: Counter[tuple] = Counter()

    def _emit(self, event_type: str, at: float, key: tuple, **fields: Any) -> None:
        self.sink.emit(self._events.event(event_type, from_unix(at), key, **fields))

    def _key(self, *parts: object) -> tuple:
        # Pipecat has no request ids: the n-th report of its kind by a processor names it.
        self._occurrences[parts] += 1
        return (*parts, self._occurrences[parts])

    def _service(self, service: Any, kind: str, data: Any) -> tuple[str, str]:
        name = getattr(data, "processor", None) or getattr(service, "name", "")
        configured = self.services.get(name) or self.services.get(kind)
        seen = Service(
            reported_model=getattr(data, "model", None),
            package=type(service).__module__,
            endpoint=endpoint_of(service),
        )
        self.declared_names.check(kind, seen.reported_model, configured)
        provider, model = name_service(seen, configured)
        return identifier(provider, "unknown"), identifier(model, "unknown")

    async def on_push_frame(self, data: FramePushed) -> None:
        frame = data.frame
        now = self.clock()
        if isinstance(frame, StartFrame) and not self._started:
            self._started = True
            self._emit(
                "session.started",
                now,
                ("start",),
                scenario=self.scenario,
                channel=self.channel,
                pipeline=self.pipeline,
            )
        elif isinstance(frame, UserStartedSpeakingFrame):
            if self._turn_recorded:
                self._turn += 1
                self._turn_recorded = False
        elif isinstance(frame, BotStartedSpeakingFrame):
            self._bot_speaking = True
            self._speaking_turn = self._turn
        elif isinstance(frame, BotStoppedSpeakingFrame):
            self._bot_speaking = False
        elif isinstance(frame, InterruptionFrame) and self._bot_speaking:
            self._bot_speaking = False
            self._emit(
                "turn.interrupted",
                now,
                self._key("interrupted", self._speaking_turn),
                turn_index=self._speaking_turn,  # the reply cut short, not the user's new turn
                # Pipecat does not say how much of the reply was generated but not played.
                wasted_output_tokens=0,
                wasted_tts_characters=0,
                is_false_interruption=False,
            )
        elif isinstance(frame, MetricsFrame):
            for item in frame.data:
                self._metrics(data.source, item, now)
        elif isinstance(frame, EndFrame | CancelFrame):
            self.end("agent_hangup" if isinstance(frame, EndFrame) else "user_hangup", now)

    def end(self, end_reason: str, at: float | None = None) -> None:
        """Record the session's end (also callable by the app, e.g. with `user_hangup`)."""
        if self._ended:
            return
        self._ended = True
        at = self.clock() if at is None else at
        self._emit("session.ended", at, ("end",), end_reason=end_reason)
        flush = getattr(self.sink, "flush", None)
        if flush is not None:
            flush()

    def _metrics(self, service: Any, item: Any, now: float) -> None:
        kind = _kind(service)
        processor = getattr(item, "processor", "")
        if isinstance(item, LLMUsageMetricsData):
            self._llm_usage(service, item, now)
        elif isinstance(item, TTSUsageMetricsData):
            provider, model = self._service(service, "tts", item)
            self._recorded()
            self._emit(
                "tts.usage",
                now,
                self._key("tts", processor),
                provider=provider,
                model=model,
                turn_index=self._turn,
                characters=non_negative_int(item.value),
                audio_seconds="0",  # Pipecat reports characters only; TTS is priced by them
            )
        elif isinstance(item, STTUsageMetricsData):
            provider, model = self._service(service, "stt", item)
            self._recorded()
            self._emit(
                "asr.usage",
                now,
                self._key("stt", processor),
                provider=provider,
                model=model,
                turn_index=self._turn,
                audio_seconds=decimal_text(item.value.audio_seconds),
            )
        elif isinstance(item, TTFBMetricsData) and kind in TTFB_SEGMENTS and item.value > 0:
            # (a pipeline opens with a zero TTFB per processor: nothing was measured yet)
            self._latency(TTFB_SEGMENTS[kind], now - item.value, now)
        elif isinstance(item, TurnMetricsData) and item.is_complete:
            self._latency("endpointing", now - item.e2e_processing_time_ms / 1000, now)

    def _recorded(self) -> None:
        self._turn_recorded = True

    def _llm_usage(self, service: Any, item: LLMUsageMetricsData, now: float) -> None:
        usage = item.value
        cached = non_negative_int(usage.cache_read_input_tokens)
        output = non_negative_int(usage.completion_tokens)
        # `total_tokens` is gross of the cache on every service; `prompt_tokens` is not.
        gross_input = max(non_negative_int(usage.total_tokens) - output, cached)
        self._recorded()
        key = self._key("llm", item.processor)
        audio_in = non_negative_int(usage.input_audio_tokens)
        audio_out = non_negative_int(usage.output_audio_tokens)
        if audio_in or audio_out:
            provider, model = self._service(service, "realtime", item)
            cached_audio = min(non_negative_int(usage.cache_read_input_audio_tokens), cached)
            self._emit(
                "realtime.usage",
                now,
                key,
                provider=provider,
                model=model,
                turn_index=self._turn,
                input_audio_tokens=max(audio_in - cached_audio, 0),
                cached_input_audio_tokens=cached_audio,
                input_text_tokens=max(gross_input - audio_in - (cached - cached_audio), 0),
                cached_input_text_tokens=cached - cached_audio,
                output_audio_tokens=audio_out,
                output_text_tokens=max(output - audio_out, 0),
            )
            return
        provider, model = self._service(service, "llm", item)
        self._emit(
            "llm.usage",
            now,
            key,
            provider=provider,
            model=model,
            turn_index=self._turn,
            input_tokens=gross_input - cached,
            cached_input_tokens=cached,
            output_tokens=output,
        )

    def _latency(self, segment: str, start: float, end: float) -> None:
        if (self._turn, segment) in self._latency_seen:
            return
        self._latency_seen.add((self._turn, segment))
        self._recorded()
        self._emit(
            "turn.latency",
            end,
            ("latency", self._turn, segment),
            turn_index=self._turn,
            segment=segment,
            started_at=timestamp_text(from_unix(start)),
            ended_at=timestamp_text(from_unix(max(start, end))),
        )
