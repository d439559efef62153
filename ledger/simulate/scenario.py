"""What the simulator simulates: tenants, providers and traffic shapes (the shared catalogue).

The names here must agree with the reference data (rate card, price plans): a provider/model pair
the rate card does not know would make every one of its usage lines unpriced. Everything numeric is
a plausible shape, not a measurement: volumes, hourly curves, turn lengths and latency tails are
tuned so a month of five tenants looks like a month of production traffic on the boards.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

SHANGHAI_OFFSET_MS = 8 * 3600 * 1000  # Asia/Shanghai has no DST: a fixed +08:00 is exact.

# The rate card changes deepseek-chat's prices on this date (reference data owns the rows; the
# default simulated period must straddle it so the ledger's effective-dating is exercised).
PRICE_CHANGE_DATE = date(2026, 11, 16)

# The injected anomaly: this tenant's LLM prefix cache breaks on these days of the period
# (0-based: with the default start 2026-11-01 they are 2026-11-20 and 2026-11-21).
ANOMALY_TENANT = "bright-bank"
ANOMALY_DAY_OFFSETS: tuple[int, ...] = (19, 20)

SCENARIOS: tuple[str, ...] = ("customer_service", "companion", "hardware", "outbound", "other")
CHANNELS: tuple[str, ...] = ("pstn", "sip", "webrtc", "device")
END_REASONS: tuple[str, ...] = ("user_hangup", "agent_hangup", "transfer", "timeout", "error")

# (provider, model) tables; tenants refer to rows by index. `*_FAILOVER[i]` is the row a session
# switches to after a provider_failover on that component.
ASR_MODELS: tuple[tuple[str, str], ...] = (
    ("aliyun", "paraformer-realtime-v2"),
    ("deepgram", "nova-3"),
)
ASR_FAILOVER: tuple[int, ...] = (1, 0)
LLM_MODELS: tuple[tuple[str, str], ...] = (
    ("qwen", "qwen-turbo"),
    ("qwen", "qwen-max"),
    ("deepseek", "deepseek-chat"),
    ("openai", "gpt-4.1-mini"),
)
LLM_FAILOVER: tuple[int, ...] = (2, 2, 1, 1)
TTS_MODELS: tuple[tuple[str, str], ...] = (
    ("aliyun", "cosyvoice-v2"),
    ("elevenlabs", "flash-v2.5"),
)
TTS_FAILOVER: tuple[int, ...] = (1, 0)
REALTIME_MODELS: tuple[tuple[str, str], ...] = (
    ("qwen", "qwen-omni-turbo-realtime"),
    ("openai", "gpt-realtime"),
)
REALTIME_FAILOVER: tuple[int, ...] = (1, 0)
VISION_MODEL: tuple[str, str] = ("qwen", "qwen-vl-plus")

# Sources (emitting systems) and the offset style each writes `occurred_at` in.
SOURCES: tuple[str, ...] = ("gw-cn-east-1", "gw-cn-north-2", "edge-devices")
SOURCE_USES_LOCAL_OFFSET: tuple[bool, ...] = (False, True, True)
SOURCE_REGION: tuple[str, ...] = ("cn-east-1", "cn-north-2", "cn-east-1")

# Hourly shape of session starts (Asia/Shanghai hour 0..23), per scenario.
HOURLY_TRAFFIC: dict[str, tuple[float, ...]] = {
    "customer_service": (
        0.15, 0.1, 0.08, 0.08, 0.1, 0.2, 0.5, 1.2, 3.0, 5.0, 6.0, 6.0,
        4.0, 4.5, 5.8, 5.8, 5.2, 4.5, 3.0, 2.0, 1.5, 1.0, 0.6, 0.3,
    ),
    # Outbound calling is only allowed in office hours.
    "outbound": (
        0, 0, 0, 0, 0, 0, 0, 0, 0, 4.0, 6.0, 6.0,
        1.0, 2.0, 6.0, 6.0, 5.0, 4.0, 0.5, 0, 0, 0, 0, 0,
    ),
    "companion": (
        0.8, 0.5, 0.3, 0.2, 0.2, 0.3, 0.6, 1.2, 1.5, 1.6, 1.8, 2.0,
        2.2, 2.0, 2.0, 2.2, 2.6, 3.0, 3.6, 4.6, 5.2, 5.0, 3.6, 1.8,
    ),
    # Children's toys: after school and before bed.
    "hardware": (
        0.1, 0.05, 0.02, 0.02, 0.02, 0.05, 0.3, 1.0, 1.2, 1.0, 1.2, 1.5,
        2.0, 1.6, 1.5, 2.0, 3.2, 4.2, 4.8, 5.5, 5.0, 3.0, 0.8, 0.2,
    ),
    "other": (
        0.2, 0.1, 0.1, 0.1, 0.1, 0.2, 0.5, 1.0, 2.5, 4.0, 4.5, 4.5,
        3.5, 4.0, 4.5, 4.5, 4.0, 3.5, 2.5, 2.0, 1.5, 1.0, 0.6, 0.3,
    ),
}  # fmt: skip
WEEKEND_FACTOR: dict[str, float] = {
    "customer_service": 0.6,
    "outbound": 0.2,
    "companion": 1.3,
    "hardware": 1.6,
    "other": 0.7,
}
# Median number of turns beyond the two every session has (greeting and closing).
EXTRA_TURNS_MEDIAN: dict[str, float] = {
    "customer_service": 7.0,
    "outbound": 3.0,
    "companion": 11.0,
    "hardware": 8.0,
    "other": 5.0,
}
END_REASON_MIX: dict[str, tuple[float, ...]] = {  # in END_REASONS order
    "customer_service": (0.50, 0.30, 0.12, 0.04, 0.04),
    "outbound": (0.70, 0.25, 0.0, 0.03, 0.02),
    "companion": (0.75, 0.10, 0.0, 0.12, 0.03),
    "hardware": (0.72, 0.10, 0.0, 0.15, 0.03),
    "other": (0.60, 0.30, 0.03, 0.04, 0.03),
}

# Latency budget tiers (ms per segment, SEGMENTS order), as in the default budget profiles.
RELAXED_BUDGET_MS: tuple[int, ...] = (250, 150, 300, 120, 60)
TIGHT_BUDGET_MS: tuple[int, ...] = (150, 80, 160, 80, 30)
TIGHT_SCENARIOS: frozenset[str] = frozenset({"companion", "hardware"})


@dataclass(frozen=True)
class TenantProfile:
    """How one tenant's traffic looks. Model fields are indexes into the tables above."""

    tenant_id: str
    weight: float  # share of the per-tenant `sessions_per_day` scale
    scenarios: tuple[tuple[str, float], ...]
    channel: str
    realtime_share: float
    sources: tuple[tuple[str, float], ...]
    asr: int
    llm_small: int
    llm_large: int
    tts: int
    realtime: int
    language: str
    agent_ids: tuple[str, ...]  # the first is the main version, the others an A/B share
    system_prompt_tokens: int
    chars_per_token: float  # characters of speech per output token (zh ~1.5, en ~4)
    chars_per_second: float  # speaking rate
    greeting_chars: int  # the cached greeting phrase
    cached_greeting_share: float
    interruption_rate: float
    false_interruption_share: float


TENANTS: tuple[TenantProfile, ...] = (
    TenantProfile(
        tenant_id="acme-telecom",
        weight=1.6,
        scenarios=(("customer_service", 1.0),),
        channel="pstn",
        realtime_share=0.0,
        sources=(("gw-cn-east-1", 1.0),),
        asr=0,
        llm_small=0,
        llm_large=1,
        tts=0,
        realtime=0,
        language="zh-CN",
        agent_ids=("acme-care-v12", "acme-care-v13"),
        system_prompt_tokens=1800,
        chars_per_token=1.4,
        chars_per_second=4.5,
        greeting_chars=32,
        cached_greeting_share=0.8,
        interruption_rate=0.08,
        false_interruption_share=0.25,
    ),
    TenantProfile(
        tenant_id="bright-bank",
        weight=1.2,
        scenarios=(("customer_service", 0.7), ("outbound", 0.3)),
        channel="sip",
        realtime_share=0.15,
        sources=(("gw-cn-east-1", 0.6), ("gw-cn-north-2", 0.4)),
        asr=0,
        llm_small=0,
        llm_large=2,
        tts=0,
        realtime=0,
        language="zh-CN",
        agent_ids=("bright-svc-v7", "bright-svc-v8"),
        system_prompt_tokens=3200,  # long compliance instructions: the prefix cache matters
        chars_per_token=1.4,
        chars_per_second=4.2,
        greeting_chars=40,
        cached_greeting_share=0.85,
        interruption_rate=0.07,
        false_interruption_share=0.2,
    ),
    TenantProfile(
        tenant_id="kiddo-toys",
        weight=0.8,
        scenarios=(("hardware", 1.0),),
        channel="device",
        realtime_share=0.6,
        sources=(("edge-devices", 1.0),),
        asr=0,
        llm_small=0,
        llm_large=1,
        tts=0,
        realtime=0,
        language="zh-CN",
        agent_ids=("kiddo-buddy-v3",),
        system_prompt_tokens=1200,
        chars_per_token=1.4,
        chars_per_second=4.0,
        greeting_chars=16,
        cached_greeting_share=0.6,
        interruption_rate=0.18,  # children talk over the toy
        false_interruption_share=0.45,  # and so does the television
    ),
    TenantProfile(
        tenant_id="lumen-health",
        weight=0.6,
        scenarios=(("companion", 1.0),),
        channel="webrtc",
        realtime_share=0.3,
        sources=(("gw-cn-north-2", 1.0),),
        asr=1,
        llm_small=0,
        llm_large=3,
        tts=1,
        realtime=1,
        language="en-US",
        agent_ids=("lumen-companion-v5", "lumen-companion-v6"),
        system_prompt_tokens=2400,
        chars_per_token=4.0,
        chars_per_second=14.0,
        greeting_chars=60,
        cached_greeting_share=0.5,
        interruption_rate=0.12,
        false_interruption_share=0.3,
    ),
    TenantProfile(
        tenant_id="nova-retail",
        weight=0.8,
        scenarios=(("outbound", 0.8), ("other", 0.2)),
        channel="pstn",
        realtime_share=0.0,
        sources=(("gw-cn-north-2", 0.7), ("gw-cn-east-1", 0.3)),
        asr=0,
        llm_small=0,
        llm_large=2,
        tts=0,
        realtime=0,
        language="zh-CN",
        agent_ids=("nova-promo-v2",),
        system_prompt_tokens=1500,
        chars_per_token=1.4,
        chars_per_second=4.8,
        greeting_chars=36,
        cached_greeting_share=0.9,
        interruption_rate=0.1,
        false_interruption_share=0.2,
    ),
)


def tenant_profiles(count: int) -> tuple[TenantProfile, ...]:
    """The first `count` catalogue tenants; beyond five, `tenant-06`, ... shaped like the others.

    The extra tenants have no price plan in the reference data, which is the point: they show up
    in the ledger with costs and no revenue.
    """
    if count < 1:
        raise ValueError(f"tenants must be at least 1, got {count}")
    extra = tuple(
        replace(
            TENANTS[index % len(TENANTS)],
            tenant_id=f"tenant-{index + 1:02d}",
            weight=0.5,
            agent_ids=(f"tenant-{index + 1:02d}-agent-v1",),
        )
        for index in range(len(TENANTS), count)
    )
    return (TENANTS + extra)[:count]
