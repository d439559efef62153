"""Offline voice stacks for the collector tests: real livekit-agents and pipecat-ai sessions whose
services are fakes that report fixed usage, and webhook bodies shaped like Vapi's and Retell's
documented ones. Every figure the tests expect is derived from the numbers written here.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from livekit import rtc
from livekit.agents import Agent, AgentSession, llm, stt, tts
from livekit.agents.types import DEFAULT_API_CONNECT_OPTIONS
from livekit.agents.voice.events import AgentFalseInterruptionEvent
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import LLMTokenUsage, STTUsage
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.task import PipelineParams
from pipecat.services.llm_service import LLMService
from pipecat.services.stt_service import STTService
from pipecat.services.tts_service import TTSService
from pipecat.tests.utils import SleepFrame, run_test

from ledger.collect.livekit import LiveKitCollector
from ledger.collect.pipecat import PipecatCollector
from tests.support.event_loops import run_bounded

REPLY = "Hello there."  # 12 characters, the fake TTS's input in every turn
# One LLM request as both fakes report it: 1,200 prompt tokens of which 1,000 cached, 50 output.
PROMPT_TOKENS, CACHED_TOKENS, COMPLETION_TOKENS = 1200, 1000, 50

# ---- LiveKit: an AgentSession in text mode (no room) with fake LLM, TTS and STT plugins -------


class FakeLiveKitLLM(llm.LLM):
    def __init__(self) -> None:
        super().__init__()
        self.requests = 0

    @property
    def model(self) -> str:
        return "deepseek-chat"

    @property
    def provider(self) -> str:
        return "deepseek"

    def chat(self, *, chat_ctx, tools=None, conn_options=DEFAULT_API_CONNECT_OPTIONS, **_: Any):
        self.requests += 1
        return _FakeLiveKitStream(
            self, chat_ctx=chat_ctx, tools=tools or [], conn_options=conn_options
        )


class _FakeLiveKitStream(llm.LLMStream):
    async def _run(self) -> None:
        request = f"chatcmpl-{self._llm.requests}"
        delta = llm.ChoiceDelta(role="assistant", content=REPLY)
        self._event_ch.send_nowait(llm.ChatChunk(id=request, delta=delta))
        usage = llm.CompletionUsage(
            prompt_tokens=PROMPT_TOKENS,
            prompt_cached_tokens=CACHED_TOKENS,
            completion_tokens=COMPLETION_TOKENS,
            total_tokens=PROMPT_TOKENS + COMPLETION_TOKENS,
        )
        self._event_ch.send_nowait(llm.ChatChunk(id=request, usage=usage))


class FakeLiveKitTTS(tts.TTS):
    def __init__(self) -> None:
        super().__init__(
            capabilities=tts.TTSCapabilities(streaming=False), sample_rate=16000, num_channels=1
        )

    @property
    def model(self) -> str:
        return "cosyvoice-v2"

    @property
    def provider(self) -> str:
        return "aliyun"

    def synthesize(self, text: str, *, conn_options=DEFAULT_API_CONNECT_OPTIONS):
        return _FakeLiveKitChunks(tts=self, input_text=text, conn_options=conn_options)


class _FakeLiveKitChunks(tts.ChunkedStream):
    async def _run(self, output_emitter) -> None:
        output_emitter.initialize(
            request_id="tts-1", sample_rate=16000, num_channels=1, mime_type="audio/pcm"
        )
        output_emitter.push(b"\x00\x00" * 16000)
        output_emitter.flush()


class FakeLiveKitSTT(stt.STT):
    def __init__(self) -> None:
        super().__init__(capabilities=stt.STTCapabilities(streaming=False, interim_results=False))

    @property
    def model(self) -> str:
        return "paraformer-realtime-v2"

    @property
    def provider(self) -> str:
        return "aliyun"

    async def _recognize_impl(self, buffer, *, language=None, conn_options=None):
        text = stt.SpeechData(language="en", text="hi")
        return stt.SpeechEvent(
            type=stt.SpeechEventType.FINAL_TRANSCRIPT, request_id="stt-1", alternatives=[text]
        )


LIVEKIT_AUDIO_SECONDS = 2  # the one recognition: 2 s of 16 kHz mono


async def _livekit_session(collector: LiveKitCollector) -> None:
    session = AgentSession(llm=FakeLiveKitLLM(), tts=FakeLiveKitTTS(), stt=FakeLiveKitSTT())
    collector.attach(session)
    await session.start(Agent(instructions="Answer briefly."))
    for words in ("hello", "what time is it"):
        await session.run(user_input=words)
        async for _ in session.tts.synthesize(REPLY):
            pass
    frame = rtc.AudioFrame(b"\x00\x00" * 16000 * LIVEKIT_AUDIO_SECONDS, 16000, 1, 32000)
    await session.stt.recognize([frame])
    session.emit("agent_false_interruption", AgentFalseInterruptionEvent(resumed=True))
    await session.aclose()


def run_livekit_session(sink, session_id: str, tenant_id: str) -> LiveKitCollector:
    """Two user turns (two LLM replies, each spoken), one recognition, one false interruption."""
    collector = LiveKitCollector(sink, tenant_id=tenant_id, session_id=session_id)
    run_bounded(_livekit_session(collector))
    return collector


# ---- Pipecat: a pipeline of fake STT, LLM and TTS services, observed by the collector ----------


class FakePipecatSTT(STTService):
    """Reports 3.5 s of audio and a TTFB when the user stops speaking."""

    def can_generate_metrics(self) -> bool:
        return True

    async def run_stt(self, audio: bytes):
        yield None

    async def process_frame(self, frame, direction) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, UserStoppedSpeakingFrame):
            await self.start_ttfb_metrics()
            await asyncio.sleep(0.01)
            await self.stop_ttfb_metrics()
            await self.start_stt_usage_metrics(STTUsage(audio_seconds=3.5))


class FakePipecatLLM(LLMService):
    """Answers a transcription with REPLY, reporting OpenAI-style (gross) token usage."""

    def can_generate_metrics(self) -> bool:
        return True

    async def process_frame(self, frame, direction) -> None:
        await super().process_frame(frame, direction)
        if not isinstance(frame, TranscriptionFrame):
            await self.push_frame(frame, direction)
            return
        await self.start_ttfb_metrics()
        await self.push_frame(LLMFullResponseStartFrame())
        await self.stop_ttfb_metrics()
        await self.push_frame(LLMTextFrame(REPLY))
        usage = LLMTokenUsage(
            prompt_tokens=PROMPT_TOKENS,
            completion_tokens=COMPLETION_TOKENS,
            total_tokens=PROMPT_TOKENS + COMPLETION_TOKENS,
            cache_read_input_tokens=CACHED_TOKENS,
        )
        await self.start_llm_usage_metrics(usage)
        await self.push_frame(LLMFullResponseEndFrame())


class FakePipecatTTS(TTSService):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(sample_rate=16000, **kwargs)

    def can_generate_metrics(self) -> bool:
        return True

    async def run_tts(self, text: str, context_id: str):
        await self.start_tts_usage_metrics(text)
        yield TTSAudioRawFrame(
            audio=b"\x00\x00" * 1600, sample_rate=16000, num_channels=1, context_id=context_id
        )


def _user_turn(words: str) -> list:
    return [
        UserStartedSpeakingFrame(),
        UserStoppedSpeakingFrame(),
        TranscriptionFrame(words, "caller", "2026-11-20T02:00:00Z"),
        SleepFrame(0.3),
        BotStartedSpeakingFrame(),
    ]


def run_pipecat_pipeline(sink, session_id: str, tenant_id: str) -> PipecatCollector:
    """Two user turns; the caller cuts the second reply short (one interruption)."""
    collector = PipecatCollector(
        sink,
        tenant_id=tenant_id,
        session_id=session_id,
        # The fakes live outside pipecat.services.<provider>: the configuration names them.
        services={
            "stt": ("aliyun", "paraformer-realtime-v2"),
            "llm": ("deepseek", "deepseek-chat"),
            "tts": ("aliyun", "cosyvoice-v2"),
        },
    )
    frames = [
        *_user_turn("hello"),
        BotStoppedSpeakingFrame(),
        *_user_turn("what time is it"),
        UserStartedSpeakingFrame(),
        InterruptionFrame(),
        SleepFrame(0.1),
    ]
    pipeline = Pipeline([FakePipecatSTT(), FakePipecatLLM(), FakePipecatTTS()])
    params = PipelineParams(enable_metrics=True, enable_usage_metrics=True)
    run_bounded(
        run_test(pipeline, frames_to_send=frames, observers=[collector], pipeline_params=params)
    )
    return collector


# ---- Vapi and Retell: webhook bodies in their documented shapes ---------------------------------

CALL_START = datetime(2026, 11, 20, 2, 0, 0, tzinfo=UTC)


def vapi_report(call_id: str, tenant_id: str) -> dict:
    """An end-of-call report of a 150 s inbound phone call (costs in US dollars)."""
    return {
        "message": {
            "type": "end-of-call-report",
            "timestamp": "2026-11-20T02:02:31.000Z",
            "endedReason": "customer-ended-call",
            "startedAt": "2026-11-20T02:00:00.000Z",
            "endedAt": "2026-11-20T02:02:30.000Z",
            "cost": 0.2522,
            "costs": [
                {
                    "type": "transcriber",
                    "transcriber": {"provider": "deepgram", "model": "nova-3"},
                    "minutes": 2.5,
                    "cost": 0.0193,
                },
                {
                    "type": "model",
                    "model": {"provider": "openai", "model": "gpt-4.1-mini"},
                    "promptTokens": 30000,
                    "cachedPromptTokens": 20000,
                    "completionTokens": 1500,
                    "cost": 0.0084,
                },
                {
                    "type": "voice",
                    "voice": {"provider": "elevenlabs", "voiceId": "v-123", "model": "flash-v2.5"},
                    "characters": 1200,
                    "cost": 0.078,
                },
                {"type": "transport", "provider": "twilio", "minutes": 2.5, "cost": 0.0215},
                {"type": "vapi", "subType": "normal", "minutes": 2.5, "cost": 0.125},
            ],
            "costBreakdown": {"stt": 0.0193, "llm": 0.0084, "tts": 0.078, "vapi": 0.125},
            "artifact": {"transcript": "AI: Hello there. User: Bye."},
            "call": {
                "id": call_id,
                "type": "inboundPhoneCall",
                "assistantId": "asst-1",
                "metadata": {"tenant_id": tenant_id},
            },
        }
    }


def retell_webhook(call_id: str, tenant_id: str, event: str = "call_ended") -> dict:
    """A 90 s phone call; Retell's costs are in cents."""
    start_ms = int(CALL_START.timestamp() * 1000)
    return {
        "event": event,
        "call": {
            "call_type": "phone_call",
            "direction": "inbound",
            "call_id": call_id,
            "agent_id": "agent_123",
            "call_status": "ended",
            "start_timestamp": start_ms,
            "end_timestamp": start_ms + 90_000,
            "duration_ms": 90_000,
            "disconnection_reason": "agent_hangup",
            "metadata": {"tenant_id": tenant_id},
            "transcript": "Agent: Hello there.",
            "call_cost": {
                "product_costs": [
                    {"product": "elevenlabs_tts", "unit_price": 0.1166667, "cost": 10.5},
                    {"product": "gpt_4o_mini", "unit_price": 0.0083333, "cost": 0.75},
                    {"product": "retell_platform", "unit_price": 0.0166667, "cost": 1.5},
                ],
                "total_duration_seconds": 90,
                "total_duration_unit_price": 0.1416667,
                "combined_cost": 12.75,
            },
        },
    }


def cost_rule_events(session_id: str, tenant_id: str) -> list[dict]:
    """A session exercising SPEC 9's rule per component x provider (all amounts in CNY):
    llm: priced usage and a reported cost -> the usage (0.0016); asr: priced aliyun usage plus an
    unpriced provider with a reported 0.02 -> mixed (0.0144 + 0.02); tts: unpriced usage, nothing
    reported -> unpriced (0, has_unpriced_usage)."""
    base = {"source": "rules", "tenant_id": tenant_id, "session_id": session_id}
    rows = [
        (
            "session.started",
            "02:00:00",
            {"scenario": "other", "channel": "sip", "pipeline": "cascade"},
        ),
        (
            "llm.usage",
            "02:00:10",
            {
                "provider": "deepseek",
                "model": "deepseek-chat",
                "turn_index": 0,
                "input_tokens": 1000,
                "cached_input_tokens": 0,
                "output_tokens": 0,
            },
        ),
        (
            "cost.reported",
            "02:00:11",
            {"provider": "deepseek", "component": "llm", "amount": "0.5", "currency": "CNY"},
        ),
        (
            "asr.usage",
            "02:00:12",
            {"provider": "aliyun", "model": "paraformer-realtime-v2", "audio_seconds": "60"},
        ),
        ("asr.usage", "02:00:13", {"provider": "acme-asr", "model": "y", "audio_seconds": "30"}),
        (
            "cost.reported",
            "02:00:14",
            {
                "provider": "acme-asr",
                "component": "asr",
                "amount": "0.02",
                "currency": "CNY",
                "item": "asr.minutes",
            },
        ),
        (
            "tts.usage",
            "02:00:15",
            {"provider": "acme-tts", "model": "x", "characters": 100, "audio_seconds": "2"},
        ),
        ("session.ended", "02:01:00", {"end_reason": "user_hangup"}),
    ]
    return [
        {
            "event_id": f"{session_id}-{n}",
            "event_type": kind,
            "occurred_at": f"2026-11-20T{at}Z",
            **base,
            **fields,
        }
        for n, (kind, at, fields) in enumerate(rows)
    ]
