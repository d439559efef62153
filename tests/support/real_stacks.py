"""Real voice stacks for the collectors' conformance tests: LiveKit Agents sessions with the real
`livekit-plugins-openai`, `-deepgram`, `-cartesia`, `-elevenlabs` and LiveKit Inference plugins,
and Pipecat pipelines with its real OpenAI, Deepgram, Cartesia and ElevenLabs services, all
pointed at the local provider stubs (tests/support/provider_stubs.py) through their base URLs.

What is real and what is driven by hand (so a reader knows what a passing test proves):
- LiveKit: each `AgentSession` is started for real; a user turn is `session.run(user_input=...)`
  (the real LLM plugin streams the stub's chat completion); TTS and STT are the session's own
  plugin objects driven directly (`session.tts.synthesize`, `session.stt.stream()`) because these
  sessions run in text mode (no room, no audio in or out); their metrics reach the collector through
  the session's own `metrics_collected` / `session_usage_updated` events. The interrupted turn
  is real: `session.say` plays into a speaker that holds playback, `session.interrupt()` cuts it,
  and LiveKit adds the interrupted assistant message. The false interruption is real too: a
  session hears a silent microphone through the Deepgram plugin while it speaks into a pausable
  speaker; the Deepgram stub reports an interim "uh" (LiveKit pauses the reply), then an endpoint
  with no words (LiveKit's false-interruption timer resumes the reply and emits
  `agent_false_interruption`).
- Pipecat: real pipelines run by `pipecat.tests.utils.run_test`; audio frames go into the real
  Deepgram service (WebSocket to the stub), an `LLMContextFrame` into the real OpenAI LLM service,
  `TTSSpeakFrame`s into the real TTS services. Bot speaking frames, which an output transport
  would push, are sent by hand around the interruption.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from dataclasses import dataclass, field

import aiohttp
from livekit import rtc
from livekit.agents import Agent, AgentSession, inference, utils
from livekit.agents.voice.io import AudioInput, AudioOutput, AudioOutputCapabilities
from livekit.plugins import cartesia, deepgram, elevenlabs, openai
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    InputAudioRawFrame,
    InterruptionFrame,
    LLMContextFrame,
    TTSSpeakFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.task import PipelineParams
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.services.cartesia.tts import CartesiaHttpTTSService
from pipecat.services.deepgram.stt import DeepgramSTTService
from pipecat.services.elevenlabs.tts import ElevenLabsHttpTTSService
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.openai.tts import OpenAITTSService
from pipecat.tests.utils import SleepFrame, run_test

from ledger.collect.livekit import LiveKitCollector
from ledger.collect.pipecat import PipecatCollector
from tests.support.event_loops import run_bounded
from tests.support.provider_stubs import ProviderStub

TENANT = "nova-retail"
SPOKEN = "It is noon."  # what each TTS is asked to say in a plain turn (11 characters)
CUT_SHORT = "Our opening hours are nine to five on weekdays."  # the interrupted reply (47)
# Audio the tests push into each STT: 100 ms frames of 16 kHz mono silence.
STT_FRAMES, FRAME_SAMPLES, STT_RATE = 30, 1600, 16_000  # 3.0 s
INFERENCE_STT_FRAMES = 20  # 2.0 s
# LiveKit Inference wants a key and a secret to sign its token; the stub never checks them.
INFERENCE_CREDENTIALS = {
    "api_key": "lk-stub-key",
    "api_secret": "lk-stub-secret-0123456789abcdef0123",
}


@dataclass
class ListSink:
    """The collectors' sink interface, keeping events in memory in emitted order."""

    events: list[dict] = field(default_factory=list)

    def emit(self, event: dict) -> None:
        self.events.append(event)


def _silence_frame() -> rtc.AudioFrame:
    return rtc.AudioFrame(b"\x00\x00" * FRAME_SAMPLES, STT_RATE, 1, FRAME_SAMPLES)


class HeldSpeaker(AudioOutput):
    """A speaker that keeps playing what it was given until it is cleared: the reply is still
    being heard when the caller cuts in."""

    def __init__(self) -> None:
        super().__init__(label="held", capabilities=AudioOutputCapabilities(pause=False))
        self.playing = asyncio.Event()
        self._cleared = False

    async def capture_frame(self, frame: rtc.AudioFrame) -> None:
        await super().capture_frame(frame)
        if not self.playing.is_set():
            self.playing.set()
            self.on_playback_started(created_at=time.time())

    def flush(self) -> None:
        super().flush()

    def clear_buffer(self) -> None:
        if self.playing.is_set() and not self._cleared:
            self._cleared = True
            self.on_playback_finished(playback_position=0.1, interrupted=True)


# ---- LiveKit --------------------------------------------------------------------------------


async def _livekit_plugins(stub: ProviderStub, sink: ListSink) -> None:
    """OpenAI LLM and TTS, Deepgram STT: one user turn, its reply spoken, 3 s recognised."""
    session = AgentSession(
        llm=openai.LLM(model="gpt-4.1-mini", base_url=f"{stub.http}/v1", api_key="sk-stub"),
        tts=openai.TTS(
            model="tts-1", base_url=f"{stub.http}/v1", api_key="sk-stub", response_format="pcm"
        ),
        stt=deepgram.STT(model="nova-3", base_url=f"{stub.http}/v1/listen", api_key="dg-stub"),
    )
    LiveKitCollector(sink, tenant_id=TENANT, session_id="RM_plugins").attach(session)
    await session.start(Agent(instructions="Answer briefly."))
    await session.run(user_input="what time is it")
    async for _ in session.tts.synthesize(SPOKEN):
        pass
    async with session.stt.stream() as stream:
        for _ in range(STT_FRAMES):
            stream.push_frame(_silence_frame())
        stream.end_input()
        async for _ in stream:
            pass
    await session.aclose()


async def _livekit_inference(stub: ProviderStub, sink: ListSink) -> None:
    """LiveKit Inference LLM and STT (`openai/gpt-4.1-mini`, `deepgram/nova-3:en`) and the
    Cartesia plugin: one user turn, its reply spoken, 2 s recognised."""
    session = AgentSession(
        llm=inference.LLM(
            "openai/gpt-4.1-mini", base_url=f"{stub.http}/v1", **INFERENCE_CREDENTIALS
        ),
        stt=inference.STT("deepgram/nova-3:en", base_url=stub.http, **INFERENCE_CREDENTIALS),
        tts=cartesia.TTS(model="sonic-2", base_url=stub.http, api_key="ca-stub", voice="voice-1"),
    )
    LiveKitCollector(sink, tenant_id=TENANT, session_id="RM_inference").attach(session)
    await session.start(Agent(instructions="Answer briefly."))
    await session.run(user_input="what time is it")
    async for _ in session.tts.synthesize(SPOKEN):
        pass
    async with session.stt.stream() as stream:
        for _ in range(INFERENCE_STT_FRAMES):
            stream.push_frame(_silence_frame())
        stream.end_input()
        async for _ in stream:
            pass
    await session.aclose()


async def _livekit_interruptions(stub: ProviderStub, sink: ListSink) -> None:
    """ElevenLabs TTS (streamed over its WebSocket): a reply cut short by the caller."""
    session = AgentSession(
        tts=elevenlabs.TTS(
            model="eleven_flash_v2_5",
            base_url=f"{stub.http}/v1",
            api_key="el-stub",
            voice_id="voice-1",
            encoding="pcm_24000",
        )
    )
    speaker = HeldSpeaker()
    session.output.audio = speaker
    LiveKitCollector(sink, tenant_id=TENANT, session_id="RM_interruptions").attach(session)
    await session.start(Agent(instructions="Answer briefly."))
    handle = session.say(CUT_SHORT)
    await speaker.playing.wait()
    session.interrupt()
    await handle
    await session.aclose()


class SilentMicrophone(AudioInput):
    """A caller who says nothing: 10 ms of silence every 10 ms."""

    def __init__(self) -> None:
        super().__init__(label="silent-microphone")

    async def __anext__(self) -> rtc.AudioFrame:
        await asyncio.sleep(0.01)
        return rtc.AudioFrame(b"\x00\x00" * 160, STT_RATE, 1, 160)


class PausableSpeaker(HeldSpeaker):
    """A held speaker that LiveKit may pause and resume (needed to resume a reply after a false
    interruption)."""

    def __init__(self) -> None:
        AudioOutput.__init__(
            self, label="pausable", capabilities=AudioOutputCapabilities(pause=True)
        )
        self.playing = asyncio.Event()
        self.paused = asyncio.Event()
        self._cleared = False

    def pause(self) -> None:
        self.paused.set()  # nothing is really playing: holding it is pausing it

    def resume(self) -> None:
        pass


async def _livekit_false_interruption(stub: ProviderStub, sink: ListSink) -> None:
    """OpenAI TTS and Deepgram STT with LiveKit's own turn handling: the caller's "uh" while the
    agent speaks, then silence: a false interruption, the reply resumed."""
    session = AgentSession(
        stt=deepgram.STT(model="nova-3", base_url=f"{stub.http}/v1/listen", api_key="dg-stub"),
        tts=openai.TTS(
            model="tts-1", base_url=f"{stub.http}/v1", api_key="sk-stub", response_format="pcm"
        ),
        aec_warmup_duration=None,  # no echo-cancellation grace period: the "uh" counts at once
        turn_handling={
            "turn_detection": "stt",
            "interruption": {
                "resume_false_interruption": True,
                "false_interruption_timeout": 0.3,
                "min_duration": 0.0,
            },
        },
    )
    speaker = PausableSpeaker()
    session.input.audio = SilentMicrophone()
    session.output.audio = speaker
    states: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
    session.on("agent_state_changed", lambda ev: states[f"agent_{ev.new_state}"].set())
    session.on("user_state_changed", lambda ev: states[f"user_{ev.new_state}"].set())
    session.on("agent_false_interruption", lambda ev: states["false_interruption"].set())
    LiveKitCollector(sink, tenant_id=TENANT, session_id="RM_false_interruption").attach(session)
    await session.start(Agent(instructions="Answer briefly."))
    session.say(CUT_SHORT)
    await asyncio.wait_for(states["agent_speaking"].wait(), 60)
    await stub.deepgram_hears("uh", is_final=False, speech_final=False)
    await asyncio.wait_for(speaker.paused.wait(), 60)  # LiveKit paused the reply for the "uh"
    await stub.deepgram_hears("", is_final=True, speech_final=True)
    await asyncio.wait_for(states["false_interruption"].wait(), 60)
    await session.aclose()


def run_livekit_stacks() -> tuple[list[dict], ProviderStub]:
    """The four LiveKit sessions in turn, against one stub; their events in emitted order."""
    sink = ListSink()

    async def main() -> ProviderStub:
        stub = await ProviderStub().start()
        try:
            async with utils.http_context.open():
                await _livekit_plugins(stub, sink)
                await _livekit_inference(stub, sink)
                await _livekit_interruptions(stub, sink)
                await _livekit_false_interruption(stub, sink)
        finally:
            await stub.stop()
        return stub

    stub = run_bounded(main())
    return sink.events, stub


# ---- Pipecat --------------------------------------------------------------------------------

PIPECAT_PARAMS = PipelineParams(enable_metrics=True, enable_usage_metrics=True)


def _speech_frames() -> list:
    audio = [
        InputAudioRawFrame(audio=b"\x00\x00" * FRAME_SAMPLES, sample_rate=STT_RATE, num_channels=1)
        for _ in range(STT_FRAMES)
    ]
    return [
        VADUserStartedSpeakingFrame(),
        UserStartedSpeakingFrame(),
        *audio,
        VADUserStoppedSpeakingFrame(),  # Deepgram's service sends Finalize on this
        UserStoppedSpeakingFrame(),
        SleepFrame(0.5),
    ]


async def _pipecat_openai_deepgram(stub: ProviderStub, sink: ListSink) -> None:
    """Deepgram STT -> OpenAI LLM -> OpenAI TTS: 3 s heard, one reply generated and spoken,
    then the caller cuts the reply short."""
    stt = DeepgramSTTService(api_key="dg-stub", base_url=stub.ws, sample_rate=STT_RATE)
    llm = OpenAILLMService(
        api_key="sk-stub",
        base_url=f"{stub.http}/v1",
        settings=OpenAILLMService.Settings(model="gpt-4.1-mini"),
    )
    tts = OpenAITTSService(
        api_key="sk-stub",
        base_url=f"{stub.http}/v1",
        sample_rate=24_000,
        settings=OpenAITTSService.Settings(model="tts-1"),
    )
    context = LLMContext(messages=[{"role": "user", "content": "what time is it"}])
    frames = [
        *_speech_frames(),
        LLMContextFrame(context),
        SleepFrame(0.5),
        BotStartedSpeakingFrame(),
        UserStartedSpeakingFrame(),
        InterruptionFrame(),
        BotStoppedSpeakingFrame(),
        SleepFrame(0.1),
    ]
    collector = PipecatCollector(sink, tenant_id=TENANT, session_id="pipecat-openai")
    await run_test(
        Pipeline([stt, llm, tts]),
        frames_to_send=frames,
        observers=[collector],
        pipeline_params=PIPECAT_PARAMS,
    )


async def _pipecat_tts(stub: ProviderStub, sink: ListSink, session_id: str, service) -> None:
    collector = PipecatCollector(sink, tenant_id=TENANT, session_id=session_id)
    await run_test(
        Pipeline([service]),
        frames_to_send=[TTSSpeakFrame(SPOKEN), SleepFrame(0.5)],
        observers=[collector],
        pipeline_params=PIPECAT_PARAMS,
    )


def run_pipecat_stacks() -> tuple[list[dict], ProviderStub]:
    """Three Pipecat pipelines against one stub; their events in emitted order."""
    sink = ListSink()

    async def main() -> ProviderStub:
        stub = await ProviderStub().start()
        try:
            async with aiohttp.ClientSession() as http:
                await _pipecat_openai_deepgram(stub, sink)
                cartesia_tts = CartesiaHttpTTSService(
                    api_key="ca-stub",
                    base_url=stub.http,
                    sample_rate=24_000,
                    settings=CartesiaHttpTTSService.Settings(model="sonic-2", voice="voice-1"),
                )
                await _pipecat_tts(stub, sink, "pipecat-cartesia", cartesia_tts)
                elevenlabs_tts = ElevenLabsHttpTTSService(
                    api_key="el-stub",
                    base_url=stub.http,
                    aiohttp_session=http,
                    sample_rate=24_000,
                    settings=ElevenLabsHttpTTSService.Settings(
                        model="eleven_flash_v2_5", voice="voice-1"
                    ),
                )
                await _pipecat_tts(stub, sink, "pipecat-elevenlabs", elevenlabs_tts)
        finally:
            await stub.stop()
        return stub

    stub = run_bounded(main())
    return sink.events, stub
