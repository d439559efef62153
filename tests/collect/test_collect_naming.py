"""Collectors name providers as the rate card does (SPEC 9, issue 25 defect 1): the real LiveKit
plugins and Pipecat services are built (no request is made), and the collectors are fed the
frameworks' own usage objects and frames for them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from livekit import rtc
from livekit.agents import AgentSession, inference
from livekit.agents.job import (
    JobAcceptArguments,
    JobContext,
    JobExecutorType,
    JobProcess,
    RunningJobInfo,
    _JobContextVar,
)
from livekit.agents.metrics.usage import LLMModelUsage, STTModelUsage, TTSModelUsage
from livekit.plugins import cartesia, deepgram, elevenlabs, openai
from livekit.protocol import agent, models
from pipecat.frames.frames import MetricsFrame
from pipecat.metrics.metrics import LLMTokenUsage, LLMUsageMetricsData
from pipecat.observers.base_observer import FramePushed
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.openai.llm import OpenAILLMService

from ledger.collect.livekit import LiveKitCollector
from ledger.collect.naming import (
    Service,
    host_provider,
    name_service,
    package_provider,
    split_inference_model,
)
from ledger.collect.pipecat import PipecatCollector
from ledger.contract.events import EVENT_ADAPTER
from tests.support.real_stacks import INFERENCE_CREDENTIALS, ListSink


@contextmanager
def _agent_session(**plugins: Any) -> Iterator[AgentSession]:
    """An AgentSession on a loop of its own that never runs: the session schedules a prewarm
    request to each LLM's endpoint when built, and these tests send nothing anywhere (the
    request is cancelled before it starts)."""
    loop = asyncio.new_event_loop()
    try:
        yield AgentSession(loop=loop, **plugins)
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0))  # the cancellations take effect
        loop.close()


def _livekit_usage(services: dict | None = None, **plugins: Any) -> list[dict]:
    """What a LiveKit collector attached to a session holding `plugins` emits when the session
    reports one usage per plugin, as LiveKit names it (the plugin's own provider and model)."""
    with _agent_session(**plugins) as session:
        return _usage_of(session, services, plugins)


def _usage_of(session: AgentSession, services: dict | None, plugins: dict) -> list[dict]:
    sink = ListSink()
    LiveKitCollector(sink, tenant_id="t", session_id="RM_1", services=services or {}).attach(
        session
    )
    usage = []
    for kind, plugin in plugins.items():
        if kind == "llm":
            usage.append(
                LLMModelUsage(
                    provider=plugin.provider, model=plugin.model, input_tokens=10, output_tokens=2
                )
            )
        elif kind == "tts":
            usage.append(
                TTSModelUsage(
                    provider=plugin.provider,
                    model=plugin.model,
                    characters_count=12,
                    audio_duration=1.0,
                )
            )
        else:
            usage.append(
                STTModelUsage(provider=plugin.provider, model=plugin.model, audio_duration=2.0)
            )
    _UsageEvent.emit(session, usage)
    return [e for e in sink.events if e["event_type"].endswith(".usage")]


class _UsageEvent:
    """LiveKit's own `session_usage_updated` event, emitted on the session as LiveKit does."""

    @staticmethod
    def emit(session: AgentSession, usage: list) -> None:
        from livekit.agents.metrics.usage import AgentSessionUsage
        from livekit.agents.voice.events import SessionUsageUpdatedEvent

        session.emit(
            "session_usage_updated",
            SessionUsageUpdatedEvent(usage=AgentSessionUsage(model_usage=usage)),
        )


def _names(events: list[dict]) -> list[tuple[str, str, str]]:
    return [(e["event_type"], e["provider"], e["model"]) for e in events]


def test_an_openai_compatible_livekit_plugin_is_named_by_its_endpoint_host():
    def llm(base_url: str, model: str) -> openai.LLM:
        return openai.LLM(model=model, base_url=base_url, api_key="k")

    # LiveKit reports these plugins' provider as the host ("api.groq.com", "127.0.0.1:8080").
    assert _names(_livekit_usage(llm=llm("https://api.groq.com/openai/v1", "llama-3.3-70b"))) == [
        ("llm.usage", "groq", "llama-3.3-70b")
    ]
    assert _names(_livekit_usage(llm=llm("https://api.deepseek.com/v1", "deepseek-chat"))) == [
        ("llm.usage", "deepseek", "deepseek-chat")
    ]
    assert _names(_livekit_usage(llm=llm("https://api.openai.com/v1", "gpt-4.1-mini"))) == [
        ("llm.usage", "openai", "gpt-4.1-mini")
    ]
    # an unknown host (a proxy, a local server) is the plugin's own provider
    assert _names(_livekit_usage(llm=llm("http://127.0.0.1:8080/v1", "gpt-4.1-mini"))) == [
        ("llm.usage", "openai", "gpt-4.1-mini")
    ]


def test_capitalised_plugin_names_become_the_rate_cards_lower_case_providers():
    events = _livekit_usage(
        stt=deepgram.STT(model="nova-3", api_key="k"),  # reports "Deepgram"
        tts=cartesia.TTS(model="sonic-2", api_key="k"),  # reports "Cartesia"
    )
    assert _names(events) == [
        ("asr.usage", "deepgram", "nova-3"),
        ("tts.usage", "cartesia", "sonic-2"),
    ]
    events = _livekit_usage(tts=elevenlabs.TTS(model="eleven_flash_v2_5", api_key="k"))
    assert _names(events) == [("tts.usage", "elevenlabs", "eleven_flash_v2_5")]


def test_livekit_inference_provider_model_strings_are_split():
    events = _livekit_usage(
        stt=inference.STT("deepgram/nova-3:en", **INFERENCE_CREDENTIALS),
        llm=inference.LLM("openai/gpt-4.1-mini", **INFERENCE_CREDENTIALS),
        tts=inference.TTS("cartesia/sonic-3:voice-1", **INFERENCE_CREDENTIALS),
    )
    assert sorted(_names(events)) == [
        ("asr.usage", "deepgram", "nova-3"),
        ("llm.usage", "openai", "gpt-4.1-mini"),
        ("tts.usage", "cartesia", "sonic-3"),
    ]


def test_an_explicit_override_wins_over_what_the_plugin_reports():
    plugin = openai.LLM(model="gpt-4.1-mini", base_url="https://api.openai.com/v1", api_key="k")
    events = _livekit_usage({"llm": ("azure", "gpt-4.1-mini-eu")}, llm=plugin)
    assert _names(events) == [("llm.usage", "azure", "gpt-4.1-mini-eu")]
    # a model of None keeps the reported one
    events = _livekit_usage({"llm": ("azure", None)}, llm=plugin)
    assert _names(events) == [("llm.usage", "azure", "gpt-4.1-mini")]


def _pipecat_llm_usage(service: OpenAILLMService, services: dict | None = None) -> list[dict]:
    """What a Pipecat collector emits for one LLM usage report pushed by `service`."""
    sink = ListSink()
    collector = PipecatCollector(sink, tenant_id="t", session_id="call-1", services=services)
    usage = LLMTokenUsage(prompt_tokens=100, completion_tokens=10, total_tokens=110)
    data = LLMUsageMetricsData(processor=service.name, model="gpt-4.1-mini", value=usage)
    pushed = FramePushed(
        source=service,
        destination=service,
        frame=MetricsFrame(data=[data]),
        direction=FrameDirection.DOWNSTREAM,
        timestamp=0,
    )
    asyncio.run(collector.on_push_frame(pushed))
    return sink.events


def test_pipecat_names_an_openai_service_by_its_endpoint_host_and_the_override_wins():
    groq = OpenAILLMService(api_key="k", base_url="https://api.groq.com/openai/v1")
    assert _names(_pipecat_llm_usage(groq)) == [("llm.usage", "groq", "gpt-4.1-mini")]
    local = OpenAILLMService(api_key="k", base_url="http://127.0.0.1:8080/v1")
    assert _names(_pipecat_llm_usage(local)) == [("llm.usage", "openai", "gpt-4.1-mini")]
    # the kind's configuration wins over the service's package and host
    events = _pipecat_llm_usage(local, {"llm": ("together", "llama-3.3-70b")})
    assert _names(events) == [("llm.usage", "together", "llama-3.3-70b")]


def test_naming_rules_in_order():
    assert host_provider("https://my-resource.openai.azure.com/openai") == "azure"
    assert host_provider("api.cartesia.ai") == "cartesia"
    assert host_provider("wss://api.elevenlabs.io/v1") == "elevenlabs"
    assert host_provider("127.0.0.1:8080") is None
    assert host_provider("Deepgram") is None  # a name, not a host
    assert package_provider("livekit.plugins.openai.llm") == "openai"
    assert package_provider("pipecat.services.deepgram.stt") == "deepgram"
    assert package_provider("pipecat.services.llm_service") is None  # Pipecat's base classes
    assert package_provider("my_app.voice") is None
    assert split_inference_model("deepgram/nova-3:en") == ("deepgram", "nova-3")
    assert split_inference_model("Cartesia/sonic-3") == ("cartesia", "sonic-3")
    assert split_inference_model("nova-3") is None
    # host beats package; package beats the reported name; an unknown host without a package
    # keeps its host name; nothing known stays unnamed
    openai_package = "livekit.plugins.openai.llm"
    assert name_service(Service("api.groq.com", "m", openai_package)) == ("groq", "m")
    assert name_service(Service("10.0.0.5:8000", "m", openai_package)) == ("openai", "m")
    assert name_service(Service("10.0.0.5:8000", "m", "my_app.llm")) == ("10.0.0.5", "m")
    assert name_service(Service("ElevenLabs", "eleven_flash_v2_5")) == (
        "elevenlabs",
        "eleven_flash_v2_5",
    )
    assert name_service(Service("unknown", "unknown")) == (None, None)
    assert name_service(Service("livekit", "livekit-eot")) == ("livekit", "livekit-eot")


def _job_context(room_sid: str, room_name: str) -> JobContext:
    info = RunningJobInfo(
        accept_arguments=JobAcceptArguments(name="agent", identity="agent", metadata=""),
        job=agent.Job(id="AJ_1", room=models.Room(sid=room_sid, name=room_name)),
        url="ws://127.0.0.1:7880",
        token="",
        worker_id="W_1",
        fake_job=True,
    )
    process = JobProcess(executor_type=JobExecutorType.THREAD, user_arguments=None, http_proxy=None)
    return JobContext(
        proc=process,
        info=info,
        room=rtc.Room(),
        on_connect=lambda: None,
        on_shutdown=lambda reason: None,
        inference_executor=None,
    )


def test_livekit_session_id_is_the_rooms_sid_never_its_name():
    async def attach_in_job() -> list[dict]:
        sink = ListSink()
        # a SIP room's name carries the caller's number; the SID is opaque
        token = _JobContextVar.set(_job_context("RM_8gFz2Kq", "sip-+15551234567"))
        try:
            LiveKitCollector(sink, tenant_id="t").attach(AgentSession())
        finally:
            _JobContextVar.reset(token)
        return sink.events

    events = asyncio.run(attach_in_job())
    assert [(e["event_type"], e["session_id"]) for e in events] == [
        ("session.started", "RM_8gFz2Kq")
    ]
    with _agent_session() as session, pytest.raises(ValueError, match="outside a LiveKit job"):
        LiveKitCollector(ListSink(), tenant_id="t").attach(session)


def test_an_override_that_names_another_model_than_the_framework_reports_is_said_once(caplog):
    """The docs' old Pipecat snippet declared `deepseek-chat` for any LLM: with gpt-4.1-mini
    really running, the line is priced as declared (the override wins) but never silently."""
    local = OpenAILLMService(api_key="k", base_url="http://127.0.0.1:8080/v1")
    with caplog.at_level("WARNING", logger="ledger.collect.naming"):
        events = _pipecat_llm_usage(local, {"llm": ("deepseek", "deepseek-chat")})
    assert _names(events) == [("llm.usage", "deepseek", "deepseek-chat")]
    assert [r.getMessage() for r in caplog.records] == [
        "session call-1: services= names the llm model 'deepseek-chat' but the framework reports "
        "'gpt-4.1-mini'; the usage is priced as 'deepseek-chat' (remove the override's model, or "
        "correct it)"
    ]
    # The same model, or its dated snapshot, or a provider-only override: nothing to say.
    caplog.clear()
    with caplog.at_level("WARNING", logger="ledger.collect.naming"):
        _pipecat_llm_usage(local, {"llm": ("azure", "gpt-4.1-mini")})
        _pipecat_llm_usage(local, {"llm": ("azure", "gpt-4.1")})
        _pipecat_llm_usage(local, {"llm": ("azure", None)})
    assert caplog.records == []


def test_a_collector_counts_each_usage_line_priced_under_a_disagreeing_name():
    from ledger.collect.naming import DeclaredNames

    names = DeclaredNames("call-9")
    for _ in range(3):
        names.check("llm", "gpt-4.1", ("deepseek", "deepseek-chat"))
    names.check("stt", "deepgram/nova-3:en", ("deepgram", "nova-3"))  # LiveKit Inference's form
    assert names.disagreements == {("llm", "deepseek-chat", "gpt-4.1"): 3}


def _tts_usage_events(plugin: Any, usage: TTSModelUsage) -> list[dict]:
    sink = ListSink()
    with _agent_session(tts=plugin) as session:
        LiveKitCollector(sink, tenant_id="t", session_id="RM_1").attach(session)
        _UsageEvent.emit(session, [usage])
    return [e for e in sink.events if e["event_type"] == "tts.usage"]


def test_livekit_keeps_the_token_counts_a_token_billed_tts_reports():
    plugin = openai.TTS(model="gpt-4o-mini-tts", api_key="k")
    usage = TTSModelUsage(
        provider=plugin.provider,
        model=plugin.model,
        characters_count=480,
        input_tokens=120,
        output_tokens=2400,
        audio_duration=20.0,
    )

    (event,) = _tts_usage_events(plugin, usage)

    # contract v1.2: the input text and output audio tokens, next to the characters
    assert {k: event[k] for k in ("provider", "model", "characters", "audio_seconds")} == {
        "provider": "openai",
        "model": "gpt-4o-mini-tts",
        "characters": 480,
        "audio_seconds": "20",
    }
    assert (event["input_tokens"], event["output_audio_tokens"]) == (120, 2400)
    assert EVENT_ADAPTER.validate_python(event).input_tokens == 120


def test_livekit_leaves_out_the_token_counts_of_a_tts_that_reports_none():
    plugin = cartesia.TTS(model="sonic-2", api_key="k")
    usage = TTSModelUsage(
        provider=plugin.provider, model=plugin.model, characters_count=12, audio_duration=1.0
    )

    (event,) = _tts_usage_events(plugin, usage)

    # LiveKit's 0 means "not counted": no token fields, so the line is priced per character
    assert event["characters"] == 12
    assert "input_tokens" not in event and "output_audio_tokens" not in event
