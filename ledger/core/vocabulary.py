"""The ledger's words, defined once: components, savings kinds, phases, latency segments,
degradation kinds and meters. The contract's types are the source; everything above it (dbt via
`dbt_vars()`, the boards, the alerts, the weekly review) takes its lists from here.
"""

from __future__ import annotations

from typing import get_args

from ledger.contract.events import Component, DegradationKind, Phase, Segment

COMPONENTS: tuple[str, ...] = get_args(Component)
# One name and one colour per component everywhere people see them (boards, weekly review).
COMPONENT_LABELS: dict[str, str] = {
    "asr": "ASR",
    "llm": "LLM",
    "tts": "TTS",
    "realtime": "Realtime",
    "vision": "Vision",
    "infra": "Infra",
}
COMPONENT_COLOURS: dict[str, str] = {
    "asr": "#4e79a7",
    "llm": "#f28e2b",
    "tts": "#59a14f",
    "realtime": "#e15759",
    "vision": "#b07aa1",
    "infra": "#9c755f",
}
# The components with a cache: their cache hits are priced as savings (SPEC 5).
SAVINGS_KINDS: tuple[str, ...] = ("llm", "realtime", "tts", "vision")
PHASES: tuple[str, ...] = get_args(Phase)
DEGRADATION_KINDS: tuple[str, ...] = get_args(DegradationKind)
# Pipeline order of a turn's segments; `first_audio` is their sum (SPEC 6).
SEGMENTS: tuple[str, ...] = get_args(Segment)
FIRST_AUDIO = "first_audio"
BUDGET_LINES: tuple[str, ...] = (*SEGMENTS, FIRST_AUDIO)

# Every metered quantity a rate card prices: `component.unit`.
METERS: tuple[str, ...] = (
    "asr.audio_seconds",
    "llm.input_tokens",
    "llm.cached_input_tokens",
    "llm.output_tokens",
    "tts.characters",
    "tts.input_tokens",
    "tts.output_audio_tokens",
    "realtime.input_audio_tokens",
    "realtime.cached_input_audio_tokens",
    "realtime.input_text_tokens",
    "realtime.cached_input_text_tokens",
    "realtime.output_audio_tokens",
    "realtime.output_text_tokens",
    "vision.images",
    "infra.path_minutes",
    "infra.minutes",
    "infra.gb",
)

# A `tts.usage` is priced by these meters where the rate card prices its model by them and the
# event carries them, else by `tts.characters`: never both (SPEC 4).
TTS_TOKEN_METERS: tuple[str, ...] = ("tts.input_tokens", "tts.output_audio_tokens")

# Providers that stand for the one named in the model (SPEC 4: LiveKit Inference's
# `deepgram/nova-3`): `livekit` is what LiveKit's inference plugins report, `unknown` what a
# collector says of a service that does not name itself. Lower case.
INFERENCE_GATEWAYS: tuple[str, ...] = ("livekit", "unknown")

# SPEC 6 cache hit rates: the label people see -> the component(s) whose cache it measures. The
# prefix cache is one rate over LLM and realtime input tokens together, everywhere.
CACHE_HIT_RATES: dict[str, tuple[str, ...]] = {
    "prefix_cache_hit_rate": ("llm", "realtime"),
    "tts_phrase_cache_hit_rate": ("tts",),
    "vision_cache_hit_rate": ("vision",),
}


def dbt_vars() -> dict[str, list[str]]:
    """The vocabulary as dbt vars (`var('components')`, ...), passed with every invocation."""
    return {
        "components": list(COMPONENTS),
        "savings_kinds": list(SAVINGS_KINDS),
        "degradation_kinds": list(DEGRADATION_KINDS),
        "segments": list(SEGMENTS),
        "inference_gateways": list(INFERENCE_GATEWAYS),
        "tts_token_meters": list(TTS_TOKEN_METERS),
    }


# The weekly pool capacity mart (SPEC 11, seed 8.2) and its load figures, in the order the boards'
# Operations page and the weekly review show them.
CAPACITY_POOL_WEEKLY_MART = "fct_capacity_pool_weekly"
POOL_LOAD_FIGURES = (
    "llm_tokens_per_second_peak",
    "llm_tokens_per_second_p95_hourly_peak",
    "llm_tokens_per_second_peak_change_pct",
    "encoder_images_per_second_peak",
    "encoder_images_per_second_p95_hourly_peak",
    "peak_concurrent_paths",
)
