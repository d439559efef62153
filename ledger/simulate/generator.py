"""Vectorised generation of one simulated period of metering events.

Sessions and turns are numpy arrays (one element per session / per turn), drawn from one seeded
generator in a fixed order; each event type is then one polars frame built from those arrays. No
event is ever a Python object: that is what keeps millions of events to seconds.

A turn's timeline, in milliseconds from its start: the user speaks (`user_ms`, billed by ASR), the
five latency segments run back to back (endpointing, stt_final, llm_ttft, tts_first_frame,
network_playback), the agent speaks (`agent_ms`, cut short when the user interrupts), then a pause.
Every event's `occurred_at` is a point on that timeline, so the events of a session tell one
consistent story (usage before the end, interruptions during the agent's speech, and so on).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import numpy as np
import polars as pl
import pyarrow as pa

from ledger.contract.events import EVENT_TYPES, SEGMENTS
from ledger.simulate.layout import EVENT_FIELDS
from ledger.simulate.scenario import (
    ANOMALY_DAY_OFFSETS,
    ANOMALY_TENANT,
    ASR_FAILOVER,
    ASR_MODELS,
    CHANNELS,
    END_REASON_MIX,
    END_REASONS,
    EXTRA_TURNS_MEDIAN,
    HOURLY_TRAFFIC,
    LLM_FAILOVER,
    LLM_MODELS,
    REALTIME_FAILOVER,
    REALTIME_MODELS,
    RELAXED_BUDGET_MS,
    SCENARIOS,
    SHANGHAI_OFFSET_MS,
    SOURCE_REGION,
    SOURCE_USES_LOCAL_OFFSET,
    SOURCES,
    TIGHT_BUDGET_MS,
    TIGHT_SCENARIOS,
    TTS_FAILOVER,
    TTS_MODELS,
    VISION_MODEL,
    WEEKEND_FACTOR,
    TenantProfile,
)
from ledger.simulate.shadow import CANDIDATE as SHADOW_CANDIDATE
from ledger.simulate.shadow import KIND as SHADOW_KIND
from ledger.simulate.shadow import shadow_decisions

# Internal columns that place an event: file (day of the period, source), then order within it.
KEY_COLUMNS: tuple[str, ...] = ("_day", "_src", "_ts", "_sess", "_ord")

PHASES: tuple[str, ...] = ("greeting", "intake", "substantive", "closing")
GREETING, INTAKE, SUBSTANTIVE, CLOSING = range(4)
DEGRADATION_KINDS: tuple[str, ...] = (
    "realtime_to_cascade",
    "asr_to_dtmf",
    "tts_filler",
    "vision_clamp",
    "provider_failover",
)
NO_DEGRADATION = -1
R2C, DTMF, FILLER, CLAMP, FAILOVER = range(5)
# provider_failover hits one component; the reason code names it.
FAILOVER_ASR, FAILOVER_LLM, FAILOVER_TTS, FAILOVER_REALTIME = range(4)
FAILOVER_REASONS: tuple[str, ...] = ("asr_5xx", "llm_timeout", "tts_5xx", "realtime_5xx")
DEGRADATION_REASONS: tuple[str, ...] = (
    "realtime_timeout",
    "asr_low_confidence",
    "tts_first_frame_timeout",
    "vision_burst",
    "",  # provider_failover: from FAILOVER_REASONS
)

# Event order among events of one session at the same millisecond.
ORDER = {
    "session.started": 0,
    "session.degraded": 1,
    "vision.usage": 2,
    "turn.latency": 3,
    "asr.usage": 8,
    "llm.usage": 9,
    "turn.interrupted": 10,
    "tts.usage": 11,
    "realtime.usage": 11,
    "session.ended": 20,
    "infra.usage": 21,
    "turn.shadow": 22,
}

PREFIX_BLOCK = 64  # prefix caches serve whole blocks of tokens
USER_TOKENS_PER_SECOND = 3.2
REALTIME_INPUT_AUDIO_TOKENS_PER_SECOND = 10
REALTIME_OUTPUT_AUDIO_TOKENS_PER_SECOND = 20
LLM_OUTPUT_TOKENS_PER_SECOND = 60
RECORDING_BYTES_PER_SECOND = 16_000  # 8 kHz, 16-bit mono telephony audio


@dataclass(frozen=True)
class Period:
    start: date
    days: int
    tenants: tuple[TenantProfile, ...]
    sessions_per_day: float


@dataclass(frozen=True)
class Generated:
    frames: dict[str, pl.DataFrame]  # per event type: KEY_COLUMNS + type fields, no common ones
    session_tenant: np.ndarray  # session index -> tenant index

    @property
    def sessions(self) -> int:
        return len(self.session_tenant)


@dataclass
class _Sessions:
    tenant: np.ndarray
    day: np.ndarray
    scenario: np.ndarray
    source: np.ndarray
    start_ms: np.ndarray
    load: np.ndarray  # how busy the shared pools are at the session's hour, 0..1
    realtime: np.ndarray
    turns: np.ndarray
    intake_turns: np.ndarray
    setup_ms: np.ndarray
    agent: np.ndarray
    degradation: np.ndarray
    degradation_turn: np.ndarray
    failover_component: np.ndarray
    has_start: np.ndarray
    has_end: np.ndarray
    end_reason: np.ndarray

    @property
    def count(self) -> int:
        return len(self.tenant)


def _lognormal(rng: np.random.Generator, median: np.ndarray | float, sigma: float, size: int):
    return median * np.exp(rng.normal(0.0, sigma, size))


def _exclusive_cumsum(values: np.ndarray, first: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Per group, the sum of the values before each element (groups are contiguous runs)."""
    running = np.concatenate(([0], np.cumsum(values, dtype=np.int64)))
    return running[:-1] - running[first[owner]]


def _floor_block(tokens: np.ndarray) -> np.ndarray:
    return (tokens // PREFIX_BLOCK) * PREFIX_BLOCK


def _period_midnights_ms(period: Period) -> np.ndarray:
    """UTC epoch milliseconds of each period day's local (Asia/Shanghai) midnight."""
    first = datetime(period.start.year, period.start.month, period.start.day, tzinfo=UTC)
    base = int(first.timestamp() * 1000) - SHANGHAI_OFFSET_MS
    return base + np.arange(period.days, dtype=np.int64) * 86_400_000


def _draw_sessions(rng: np.random.Generator, period: Period) -> _Sessions:
    tenants = period.tenants
    cells: list[tuple[int, int, int, float]] = []
    for t_index, profile in enumerate(tenants):
        for day in range(period.days):
            weekend = (period.start + timedelta(days=day)).weekday() >= 5
            for scenario, share in profile.scenarios:
                factor = WEEKEND_FACTOR[scenario] if weekend else 1.0
                rate = period.sessions_per_day * profile.weight * share * factor
                cells.append((t_index, day, SCENARIOS.index(scenario), rate))
    cell_array = np.array([cell[:3] for cell in cells], dtype=np.int64).reshape(-1, 3)
    counts = rng.poisson(np.array([cell[3] for cell in cells], dtype=float))
    tenant = np.repeat(cell_array[:, 0], counts)
    day = np.repeat(cell_array[:, 1], counts)
    scenario = np.repeat(cell_array[:, 2], counts)
    count = len(tenant)

    hour = np.zeros(count, dtype=np.int64)
    # The shared model pools queue at the platform's busiest hours (customer service dominates).
    platform_curve = np.array(HOURLY_TRAFFIC["customer_service"])
    platform_curve = platform_curve / platform_curve.max()
    for s_index, name in enumerate(SCENARIOS):
        mask = scenario == s_index
        curve = np.array(HOURLY_TRAFFIC[name], dtype=float)
        hour[mask] = rng.choice(24, size=int(mask.sum()), p=curve / curve.sum())
    load = platform_curve[hour]
    within_hour_ms = rng.integers(0, 3_600_000, size=count)
    start_ms = _period_midnights_ms(period)[day] + hour * 3_600_000 + within_hour_ms

    realtime_share = np.array([p.realtime_share for p in tenants])[tenant]
    realtime = rng.random(count) < realtime_share

    source = np.zeros(count, dtype=np.int64)
    agent = np.zeros(count, dtype=np.int64)
    source_draw = rng.random(count)
    agent_draw = rng.random(count)
    for t_index, profile in enumerate(tenants):
        mask = tenant == t_index
        edges = np.cumsum([share for _, share in profile.sources])
        picks = np.minimum(np.searchsorted(edges, source_draw[mask], side="right"), len(edges) - 1)
        source[mask] = np.array([SOURCES.index(name) for name, _ in profile.sources])[picks]
        # The first agent version carries 80% of the traffic, the next one an A/B slice.
        if len(profile.agent_ids) > 1:
            agent[mask] = (agent_draw[mask] < 0.2).astype(np.int64)

    extra_median = np.array([EXTRA_TURNS_MEDIAN[name] for name in SCENARIOS])[scenario]
    extra = np.floor(_lognormal(rng, extra_median, 0.55, count)).astype(np.int64)
    turns = 2 + np.clip(extra, 0, 28)
    intake_turns = np.minimum(rng.integers(1, 3, size=count), turns - 2)
    setup_ms = rng.integers(1_500, 5_000, size=count)

    channel = np.array([CHANNELS.index(p.channel) for p in tenants])[tenant]
    telephony = channel <= CHANNELS.index("sip")
    degradation = np.full(count, NO_DEGRADATION, dtype=np.int64)
    draw = rng.random(count)
    r2c_rate = 0.02 + 0.05 * load  # realtime APIs time out when everybody is calling
    degradation[realtime & (draw < r2c_rate)] = R2C
    degradation[realtime & (draw >= r2c_rate) & (draw < r2c_rate + 0.01)] = FAILOVER
    degradation[~realtime & (draw < 0.015)] = FILLER
    degradation[~realtime & (draw >= 0.015) & (draw < 0.025)] = FAILOVER
    degradation[~realtime & telephony & (draw >= 0.025) & (draw < 0.037)] = DTMF
    hardware = scenario == SCENARIOS.index("hardware")
    clamp_draw = rng.random(count)
    degradation[hardware & (degradation == NO_DEGRADATION) & (clamp_draw < 0.02 + 0.05 * load)] = (
        CLAMP
    )
    degradation_turn = rng.integers(1, turns)
    failover_component = np.where(realtime, FAILOVER_REALTIME, rng.integers(0, 3, size=count))

    has_start = rng.random(count) >= 0.002
    has_end = rng.random(count) >= 0.004

    end_reason = np.zeros(count, dtype=np.int64)
    end_draw = rng.random(count)
    for s_index, name in enumerate(SCENARIOS):
        mask = scenario == s_index
        edges = np.cumsum(END_REASON_MIX[name])
        end_reason[mask] = np.minimum(
            np.searchsorted(edges / edges[-1], end_draw[mask], side="right"), len(edges) - 1
        )
    # A degraded session ends in an error far more often than a healthy one.
    error_draw = rng.random(count)
    end_reason[(degradation != NO_DEGRADATION) & (error_draw < 0.15)] = END_REASONS.index("error")

    return _Sessions(
        tenant=tenant,
        day=day,
        scenario=scenario,
        source=source,
        start_ms=start_ms,
        load=load,
        realtime=realtime,
        turns=turns,
        intake_turns=intake_turns,
        setup_ms=setup_ms,
        agent=agent,
        degradation=degradation,
        degradation_turn=degradation_turn,
        failover_component=failover_component,
        has_start=has_start,
        has_end=has_end,
        end_reason=end_reason,
    )


def random_uuids(rng: np.random.Generator, count: int) -> pl.Series:
    """`count` random UUIDv4 strings, drawn from `rng` (so reproducible), built without a loop."""
    raw = rng.integers(0, 256, size=(count, 16), dtype=np.uint8)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    hex_digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    nibbles = np.empty((count, 32), dtype=np.uint8)
    nibbles[:, 0::2] = hex_digits[raw >> 4]
    nibbles[:, 1::2] = hex_digits[raw & 0x0F]
    text = np.full((count, 36), ord("-"), dtype=np.uint8)
    for begin, end, at in ((0, 8, 0), (8, 12, 9), (12, 16, 14), (16, 20, 19), (20, 32, 24)):
        text[:, at : at + end - begin] = nibbles[:, begin:end]
    array = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(36), count, [None, pa.py_buffer(text.tobytes())]
    )
    return pl.Series(pl.from_arrow(array.cast(pa.binary()).cast(pa.string())))


def _fixed(units: pl.Expr, places: int) -> pl.Expr:
    """Integer units of 10**-places as an exact decimal string ("4250", 3 -> "4.250")."""
    scale = 10**places
    return pl.concat_str(
        (units // scale).cast(pl.String),
        pl.lit("."),
        (units % scale).cast(pl.String).str.zfill(places),
    )


def _timestamp(ms: pl.Expr, local: pl.Expr | bool) -> pl.Expr:
    """RFC 3339 with milliseconds, in UTC ('Z') or in Shanghai time ('+08:00')."""
    local_expr = local if isinstance(local, pl.Expr) else pl.lit(local)
    shifted = pl.when(local_expr).then(ms + SHANGHAI_OFFSET_MS).otherwise(ms)
    text = pl.from_epoch(shifted, time_unit="ms").dt.strftime("%Y-%m-%dT%H:%M:%S%.3f")
    return text + pl.when(local_expr).then(pl.lit("+08:00")).otherwise(pl.lit("Z"))


def _labels(table: tuple[str, ...], index: np.ndarray) -> pl.Series:
    return pl.Series(table, dtype=pl.String).gather(index)


class _Builder:
    """Collects one frame per event type, keyed by the session arrays."""

    def __init__(self, sessions: _Sessions) -> None:
        self.sessions = sessions
        self.frames: dict[str, pl.DataFrame] = {}

    def add(
        self,
        event_type: str,
        session: np.ndarray,
        occurred_ms: np.ndarray,
        fields: dict[str, object],
        order: np.ndarray | int | None = None,
    ) -> None:
        rank = ORDER[event_type] if order is None else order
        columns: dict[str, object] = {
            "_day": self.sessions.day[session],
            "_src": self.sessions.source[session],
            "_ts": occurred_ms.astype(np.int64),
            "_sess": session.astype(np.int64),
            "_ord": np.broadcast_to(np.asarray(rank, dtype=np.int64), session.shape).copy(),
            "event_type": pl.Series([event_type], dtype=pl.String).gather(
                np.zeros(len(session), dtype=np.int64)
            ),
        }
        columns.update(fields)
        frame = pl.DataFrame(columns)
        if event_type in self.frames:
            frame = pl.concat([self.frames[event_type], frame], how="vertical_relaxed")
        self.frames[event_type] = frame


@dataclass
class _Turns:
    """Every turn of every session, one row per turn, drawn before any event is built."""

    owner: np.ndarray  # turn -> session
    first: np.ndarray  # session -> its first turn
    turn: np.ndarray  # index within the session
    last: np.ndarray
    tenant: np.ndarray
    phase: np.ndarray
    degradation: np.ndarray
    after_degradation: np.ndarray
    degraded_here: np.ndarray
    realtime_turn: np.ndarray
    cascade_turn: np.ndarray
    user_ms: np.ndarray
    user_tokens: np.ndarray
    output_tokens: np.ndarray
    chars_per_token: np.ndarray
    characters: np.ndarray
    canned: np.ndarray
    tts_cache_hit: np.ndarray
    agent_ms: np.ndarray
    segment_ms: np.ndarray  # (turn, segment)
    interrupted: np.ndarray
    false_interruption: np.ndarray
    spoken_share: np.ndarray
    turn_start: np.ndarray
    user_end: np.ndarray
    first_audio: np.ndarray
    agent_end: np.ndarray
    session_end: np.ndarray  # per session
    system: np.ndarray  # the tenant's system prompt tokens, per turn
    failover_component: np.ndarray
    asr_model: np.ndarray
    llm_model: np.ndarray
    tts_model: np.ndarray
    rt_model: np.ndarray

    @property
    def total(self) -> int:
        return len(self.owner)


def generate(
    period: Period, rng: np.random.Generator, shadow_rng: np.random.Generator | None = None
) -> Generated:
    """One frame per event type (internal KEY_COLUMNS + its own contract fields).

    With `shadow_rng`, a shadow candidate's `turn.shadow` decisions too (ledger.simulate.shadow),
    drawn from that stream only: the production traffic is the same with or without them.

    The frames are complete but for the common fields `finalise` adds (ids, timestamps, names).
    The draws happen in a fixed order (sessions, turns, then one event kind after another), so a
    seed gives the same traffic.
    """
    s = _draw_sessions(rng, period)
    t = _draw_turns(rng, s, period.tenants)
    builder = _Builder(s)
    barge_in_hangup = _add_session_events(builder, rng, s, t, period.tenants)
    _add_degradations(builder, t)
    segment_end = _add_latencies(builder, rng, t)
    _add_vision(builder, rng, s, t)
    _add_asr(builder, t, segment_end)
    _add_llm(builder, rng, s, t, period.tenants)
    _add_tts(builder, t)
    _add_realtime(builder, rng, t)
    _add_interruptions(builder, t, barge_in_hangup)
    if shadow_rng is not None:
        _add_shadow_decisions(builder, shadow_rng, t)
    return Generated(frames=builder.frames, session_tenant=s.tenant)


def _draw_turns(
    rng: np.random.Generator, s: _Sessions, tenants: tuple[TenantProfile, ...]
) -> _Turns:
    """Each turn's phase, speech, reply, latency segments, interruption, timeline and models."""
    count = s.count

    def per_tenant(values: list) -> np.ndarray:
        """A tenant attribute for every turn."""
        return np.array(values)[tenant]

    total = int(s.turns.sum())
    owner = np.repeat(np.arange(count), s.turns)
    first = np.cumsum(s.turns) - s.turns
    turn = np.arange(total) - first[owner]
    last = turn == s.turns[owner] - 1
    tenant = s.tenant[owner]

    phase = np.full(total, SUBSTANTIVE)
    phase[(turn >= 1) & (turn <= s.intake_turns[owner])] = INTAKE
    phase[last] = CLOSING
    phase[turn == 0] = GREETING

    degradation = s.degradation[owner]
    after_degradation = turn >= s.degradation_turn[owner]
    realtime_turn = s.realtime[owner] & ~((degradation == R2C) & after_degradation)
    cascade_turn = ~realtime_turn

    user_median = np.array([1_200.0, 3_500.0, 4_500.0, 1_500.0])[phase]
    user_ms = np.clip(_lognormal(rng, user_median, 0.5, total), 300, 30_000).astype(np.int64)
    output_median = np.array([25.0, 30.0, 55.0, 25.0])[phase]
    output_tokens = np.clip(_lognormal(rng, output_median, 0.45, total), 5, 400).astype(np.int64)
    chars_per_token = np.array([p.chars_per_token for p in tenants])[tenant]
    characters = np.maximum(
        1, np.round(output_tokens * chars_per_token * rng.uniform(0.9, 1.1, total))
    ).astype(np.int64)

    # Canned turns: the agent plays a cached phrase (the greeting, "one moment please") and no
    # LLM runs. They are also the turns an interruption can land in with no LLM usage.
    canned_draw = rng.random(total)
    canned = cascade_turn & (
        ((turn == 0) & (canned_draw < per_tenant([p.cached_greeting_share for p in tenants])))
        | (((phase == INTAKE) | (phase == SUBSTANTIVE)) & (canned_draw < 0.04))
    )
    hold_chars = rng.integers(8, 15, size=total)
    greeting_chars = per_tenant([p.greeting_chars for p in tenants])
    characters = np.where(canned, np.where(turn == 0, greeting_chars, hold_chars), characters)
    # Short common replies (mostly goodbyes) also come out of the TTS phrase cache.
    reply_cache_draw = rng.random(total)
    tts_cache_hit = canned | (
        cascade_turn & (reply_cache_draw < np.where(phase == CLOSING, 0.3, 0.03))
    )
    chars_per_second = np.array([p.chars_per_second for p in tenants])[tenant]
    agent_ms = np.maximum(
        200, characters / chars_per_second * 1000 * rng.uniform(0.92, 1.08, total)
    ).astype(np.int64)

    segment_ms, degraded_here = _draw_segments(rng, s, owner, turn, degradation, after_degradation)

    interrupted = rng.random(total) < per_tenant([p.interruption_rate for p in tenants])
    false_interruption = rng.random(total) < per_tenant(
        [p.false_interruption_share for p in tenants]
    )
    spoken_share = rng.uniform(0.15, 0.85, total)
    spoken_ms = np.where(interrupted, np.round(agent_ms * spoken_share), agent_ms).astype(np.int64)
    gap_ms = rng.integers(300, 1_500, size=total)
    latency_ms = segment_ms.sum(axis=1)
    turn_ms = user_ms + latency_ms + spoken_ms + gap_ms
    turn_start = s.start_ms[owner] + s.setup_ms[owner] + _exclusive_cumsum(turn_ms, first, owner)
    user_end = turn_start + user_ms
    first_audio = user_end + latency_ms
    agent_end = first_audio + spoken_ms
    session_end = turn_start[first + s.turns - 1] + turn_ms[first + s.turns - 1]
    session_end = session_end + rng.integers(200, 1_500, size=count)

    failover_here = (degradation == FAILOVER) & after_degradation
    component = s.failover_component[owner]
    asr_model = per_tenant([p.asr for p in tenants])
    asr_model = np.where(
        failover_here & (component == FAILOVER_ASR), np.array(ASR_FAILOVER)[asr_model], asr_model
    )
    small = per_tenant([p.llm_small for p in tenants])
    large = per_tenant([p.llm_large for p in tenants])
    large = np.where(
        failover_here & (component == FAILOVER_LLM), np.array(LLM_FAILOVER)[large], large
    )
    llm_model = np.where(phase == SUBSTANTIVE, large, small)
    tts_model = per_tenant([p.tts for p in tenants])
    tts_model = np.where(
        failover_here & (component == FAILOVER_TTS), np.array(TTS_FAILOVER)[tts_model], tts_model
    )
    # After a TTS first-frame timeout the filler plays and the engine switches.
    tts_model = np.where(
        (degradation == FILLER) & after_degradation, np.array(TTS_FAILOVER)[tts_model], tts_model
    )
    rt_model = per_tenant([p.realtime for p in tenants])
    rt_model = np.where(
        failover_here & (component == FAILOVER_REALTIME),
        np.array(REALTIME_FAILOVER)[rt_model],
        rt_model,
    )
    return _Turns(
        owner=owner,
        first=first,
        turn=turn,
        last=last,
        tenant=tenant,
        phase=phase,
        degradation=degradation,
        after_degradation=after_degradation,
        degraded_here=degraded_here,
        realtime_turn=realtime_turn,
        cascade_turn=cascade_turn,
        user_ms=user_ms,
        user_tokens=np.maximum(1, np.round(user_ms / 1000 * USER_TOKENS_PER_SECOND)).astype(
            np.int64
        ),
        output_tokens=output_tokens,
        chars_per_token=chars_per_token,
        characters=characters,
        canned=canned,
        tts_cache_hit=tts_cache_hit,
        agent_ms=agent_ms,
        segment_ms=segment_ms,
        interrupted=interrupted,
        false_interruption=false_interruption,
        spoken_share=spoken_share,
        turn_start=turn_start,
        user_end=user_end,
        first_audio=first_audio,
        agent_end=agent_end,
        session_end=session_end,
        system=per_tenant([p.system_prompt_tokens for p in tenants]),
        failover_component=component,
        asr_model=asr_model,
        llm_model=llm_model,
        tts_model=tts_model,
        rt_model=rt_model,
    )


def _draw_segments(
    rng: np.random.Generator,
    s: _Sessions,
    owner: np.ndarray,
    turn: np.ndarray,
    degradation: np.ndarray,
    after_degradation: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Each turn's five latency segments in ms, and whether the session degrades at this turn."""
    total = len(owner)
    tight = np.isin(s.scenario[owner], [SCENARIOS.index(name) for name in TIGHT_SCENARIOS])
    budget = np.where(tight[:, None], np.array(TIGHT_BUDGET_MS), np.array(RELAXED_BUDGET_MS))
    # A healthy segment meets its budget at P95 on most tenant-days (median ~0.6 of the budget,
    # P95 ~0.85-0.9); the breaches come from the queueing tail, the LLM's load spikes and the
    # degradations below, so they stand out instead of every line being over every day.
    typical = np.array([0.62, 0.58, 0.58, 0.58, 0.58])
    spread = np.array([0.2, 0.22, 0.24, 0.22, 0.22])
    segment_ms = budget * typical * np.exp(rng.normal(0.0, 1.0, (total, 5)) * spread)
    tail = rng.random((total, 5)) < 0.025  # P95 is one segment queueing now and then
    segment_ms = np.where(tail, segment_ms * (1.0 + 1.5 * rng.pareto(2.0, (total, 5))), segment_ms)
    llm_column = SEGMENTS.index("llm_ttft")
    # Queueing at the busiest hours: frequent enough to breach the LLM budget on busy days, not
    # on every day (0.08 put the LLM's P95 over budget on most tenant-days).
    spike = rng.random(total) < 0.005 + 0.03 * s.load[owner] ** 3
    segment_ms[:, llm_column] += np.where(spike, rng.exponential(600.0, total), 0.0)
    degraded_here = after_degradation & (turn == s.degradation_turn[owner])
    filler_turn = degraded_here & (degradation == FILLER)
    segment_ms[:, SEGMENTS.index("tts_first_frame")] = np.where(
        filler_turn,
        rng.uniform(1_500, 3_000, total),
        segment_ms[:, SEGMENTS.index("tts_first_frame")],
    )
    # The realtime API's timeout elapses before the cascade takes over.
    r2c_turn = degraded_here & (degradation == R2C)
    segment_ms[:, llm_column] += np.where(r2c_turn, rng.uniform(2_000, 4_000, total), 0.0)
    segment_ms = np.clip(np.round(segment_ms), 1, 8_000).astype(np.int64)
    return segment_ms, degraded_here


def _add_session_events(
    builder: _Builder,
    rng: np.random.Generator,
    s: _Sessions,
    t: _Turns,
    tenants: tuple[TenantProfile, ...],
) -> np.ndarray:
    """session.started, session.ended and infra.usage; returns the turns whose user barged in
    and hung up (their interruption is reported against the next, unplayed turn)."""
    count, total = s.count, t.total
    interrupted, last, cascade_turn, canned, owner = (
        t.interrupted,
        t.last,
        t.cascade_turn,
        t.canned,
        t.owner,
    )
    session_end = t.session_end
    started = np.flatnonzero(s.has_start)
    # All tenants' agent versions in one label table; a tenant's versions start at its offset.
    agent_table = [agent for p in tenants for agent in p.agent_ids]
    agent_offset = np.cumsum([0] + [len(p.agent_ids) for p in tenants])[:-1]
    builder.add(
        "session.started",
        started,
        s.start_ms[started],
        {
            "scenario": _labels(SCENARIOS, s.scenario[started]),
            "channel": _labels(CHANNELS, _channel_of(tenants, s.tenant[started])),
            "pipeline": _labels(("cascade", "realtime"), s.realtime[started].astype(np.int64)),
            "agent_id": _labels(
                tuple(agent_table), agent_offset[s.tenant[started]] + s.agent[started]
            ),
            "language": _labels(
                tuple(p.language for p in tenants), s.tenant[started].astype(np.int64)
            ),
            "region": _labels(SOURCE_REGION, s.source[started]),
        },
    )

    # A user who barges into the last turn and hangs up: the interruption is reported against the
    # turn the user started (one past the last), which has no usage of its own.
    barge_in_hangup = interrupted & last & cascade_turn & ~canned & (rng.random(total) < 0.5)
    end_reason = s.end_reason.copy()
    end_reason[owner[barge_in_hangup]] = END_REASONS.index("user_hangup")

    ended = np.flatnonzero(s.has_end)
    builder.add(
        "session.ended",
        ended,
        session_end[ended],
        {"end_reason": _labels(END_REASONS, end_reason[ended])},
    )

    duration_ms = session_end - s.start_ms
    channel = _channel_of(tenants, s.tenant)
    telephony = channel <= CHANNELS.index("sip")
    all_sessions = np.arange(count)
    minutes_units = np.round(duration_ms / 60).astype(np.int64)  # 10**-3 minutes
    infra_at = session_end  # metered when the call is torn down; ordered after session.ended
    for mask, provider, resource, unit in (
        (telephony, "telco", "pstn", "path_minutes"),
        (~telephony, "in-house", "sfu", "minutes"),
        (s.realtime, "in-house", "gpu_path", "path_minutes"),
    ):
        chosen = all_sessions[mask]
        frame_fields = {
            "provider": pl.Series([provider] * len(chosen), dtype=pl.String),
            "resource": pl.Series([resource] * len(chosen), dtype=pl.String),
            "_q": minutes_units[chosen],
            "unit": pl.Series([unit] * len(chosen), dtype=pl.String),
        }
        builder.add("infra.usage", chosen, infra_at[chosen], frame_fields)
    recorded = all_sessions[telephony]
    micro_gb = np.round(duration_ms[recorded] * RECORDING_BYTES_PER_SECOND / 1e6).astype(np.int64)
    builder.add(
        "infra.usage",
        recorded,
        infra_at[recorded],
        {
            "provider": pl.Series(["in-house"] * len(recorded), dtype=pl.String),
            "resource": pl.Series(["recording"] * len(recorded), dtype=pl.String),
            "_q": micro_gb,
            "unit": pl.Series(["gb"] * len(recorded), dtype=pl.String),
        },
    )
    builder.frames["infra.usage"] = (
        builder.frames["infra.usage"]
        .with_columns(
            quantity=pl.when(pl.col("unit") == "gb")
            .then(_fixed(pl.col("_q"), 6))
            .otherwise(_fixed(pl.col("_q"), 3))
        )
        .drop("_q")
    )
    return barge_in_hangup


def _add_degradations(builder: _Builder, t: _Turns) -> None:
    degraded_here, degradation, component = t.degraded_here, t.degradation, t.failover_component
    owner, user_end, turn = t.owner, t.user_end, t.turn
    degraded_turns = np.flatnonzero(degraded_here & (degradation != NO_DEGRADATION))
    kinds = degradation[degraded_turns]
    reasons = np.where(
        kinds == FAILOVER,
        np.array(FAILOVER_REASONS, dtype=object)[component[degraded_turns]],
        np.array(DEGRADATION_REASONS, dtype=object)[kinds],
    )
    builder.add(
        "session.degraded",
        owner[degraded_turns],
        user_end[degraded_turns] + 1,
        {
            "kind": _labels(DEGRADATION_KINDS, kinds),
            "turn_index": turn[degraded_turns],
            "reason": pl.Series(reasons.tolist(), dtype=pl.String),
        },
    )


def _add_latencies(builder: _Builder, rng: np.random.Generator, t: _Turns) -> np.ndarray:
    """turn.latency, one event per measured segment (a few go missing); returns each segment's
    end (ms) per turn."""
    total, segment_ms, user_end, owner, turn = t.total, t.segment_ms, t.user_end, t.owner, t.turn
    present = np.ones((total, 5), dtype=bool)
    missing_one = rng.random(total) < 0.02
    present[np.flatnonzero(missing_one), rng.integers(0, 5, size=total)[missing_one]] = False
    present[rng.random(total) < 0.004] = False
    segment_end = user_end[:, None] + np.cumsum(segment_ms, axis=1)
    segment_start = segment_end - segment_ms
    turn_of, segment_of = np.nonzero(present)
    ends = segment_end[turn_of, segment_of]
    builder.add(
        "turn.latency",
        owner[turn_of],
        ends,
        {
            "turn_index": turn[turn_of],
            "segment": _labels(SEGMENTS, segment_of),
            "_start": segment_start[turn_of, segment_of],
            "_end": ends,
        },
        order=ORDER["turn.latency"] + segment_of,
    )
    builder.frames["turn.latency"] = (
        builder.frames["turn.latency"]
        .with_columns(
            started_at=_timestamp(pl.col("_start"), False),
            ended_at=_timestamp(pl.col("_end"), False),
        )
        .drop("_start", "_end")
    )
    return segment_end


def _add_vision(builder: _Builder, rng: np.random.Generator, s: _Sessions, t: _Turns) -> None:
    """vision.usage: hardware sessions show the toy a picture."""
    total, owner, turn, degradation = t.total, t.owner, t.turn, t.degradation
    after_degradation, turn_start, user_ms = t.after_degradation, t.turn_start, t.user_ms
    hardware_turn = s.scenario[owner] == SCENARIOS.index("hardware")
    vision = np.flatnonzero(hardware_turn & (turn > 0) & (rng.random(total) < 0.35))
    images = np.where(rng.random(len(vision)) < 0.15, 2, 1)
    clamped = (degradation[vision] == CLAMP) & after_degradation[vision]
    builder.add(
        "vision.usage",
        owner[vision],
        turn_start[vision] + user_ms[vision] // 2,
        {
            "provider": pl.Series([VISION_MODEL[0]] * len(vision), dtype=pl.String),
            "model": pl.Series([VISION_MODEL[1]] * len(vision), dtype=pl.String),
            "turn_index": turn[vision],
            "images": images,
            "image_tokens": images * np.where(clamped, 320, 1_280),
            "cache_hit": rng.random(len(vision)) < 0.3,
        },
    )


def _add_asr(builder: _Builder, t: _Turns, segment_end: np.ndarray) -> None:
    degradation, after_degradation, degraded_here = (
        t.degradation,
        t.after_degradation,
        t.degraded_here,
    )
    cascade_turn, user_ms, segment_ms, owner, turn = (
        t.cascade_turn,
        t.user_ms,
        t.segment_ms,
        t.owner,
        t.turn,
    )
    asr_model = t.asr_model
    dtmf = (degradation == DTMF) & after_degradation & ~degraded_here  # keypad, no speech to bill
    asr = np.flatnonzero(cascade_turn & ~dtmf)
    stt_end = segment_end[:, SEGMENTS.index("stt_final")]
    audio_ms = user_ms + segment_ms[:, SEGMENTS.index("endpointing")]
    builder.add(
        "asr.usage",
        owner[asr],
        stt_end[asr],
        {
            "provider": _labels(tuple(m[0] for m in ASR_MODELS), asr_model[asr]),
            "model": _labels(tuple(m[1] for m in ASR_MODELS), asr_model[asr]),
            "_ms": audio_ms[asr],
            "turn_index": turn[asr],
        },
    )
    builder.frames["asr.usage"] = (
        builder.frames["asr.usage"]
        .with_columns(audio_seconds=_fixed(pl.col("_ms"), 3))
        .drop("_ms")
        .select(*KEY_COLUMNS, *EVENT_FIELDS["asr.usage"][5:])
    )


def _add_llm(
    builder: _Builder,
    rng: np.random.Generator,
    s: _Sessions,
    t: _Turns,
    tenants: tuple[TenantProfile, ...],
) -> None:
    total, owner, first, turn, tenant = t.total, t.owner, t.first, t.turn, t.tenant
    user_tokens, output_tokens, characters = t.user_tokens, t.output_tokens, t.characters
    canned, chars_per_token, system, cascade_turn = (
        t.canned,
        t.chars_per_token,
        t.system,
        t.cascade_turn,
    )
    first_audio, agent_end, llm_model, phase = t.first_audio, t.agent_end, t.llm_model, t.phase
    spoken_tokens = np.where(
        canned, np.round(characters / chars_per_token).astype(np.int64), output_tokens
    )
    history = _exclusive_cumsum(user_tokens + spoken_tokens, first, owner)
    prompt = system + history + user_tokens + 30  # 30: the turn's formatting and tool stubs
    cache_draw = rng.random(total)
    cached = np.where(
        cache_draw < 0.04,
        0,  # a cold cache (new replica, evicted prefix)
        np.where(cache_draw < 0.12, _floor_block(system), _floor_block(system + history)),
    )
    anomaly_tenants = [i for i, p in enumerate(tenants) if p.tenant_id == ANOMALY_TENANT]
    broken_cache = np.isin(tenant, anomaly_tenants) & np.isin(
        s.day[owner], list(ANOMALY_DAY_OFFSETS)
    )
    cached = np.where(broken_cache, np.where(cache_draw < 0.98, 0, PREFIX_BLOCK), cached)
    llm = np.flatnonzero(cascade_turn & ~canned)
    generation_ms = np.round(output_tokens / LLM_OUTPUT_TOKENS_PER_SECOND * 1000).astype(np.int64)
    llm_at = np.minimum(first_audio + generation_ms, agent_end)
    builder.add(
        "llm.usage",
        owner[llm],
        llm_at[llm],
        {
            "provider": _labels(tuple(m[0] for m in LLM_MODELS), llm_model[llm]),
            "model": _labels(tuple(m[1] for m in LLM_MODELS), llm_model[llm]),
            "turn_index": turn[llm],
            "input_tokens": (prompt - cached)[llm],
            "cached_input_tokens": cached[llm],
            "output_tokens": output_tokens[llm],
            "phase": _labels(PHASES, phase[llm]),
            "route": _labels(("small", "small", "large", "small"), phase[llm]),
        },
    )


def _add_tts(builder: _Builder, t: _Turns) -> None:
    cascade_turn, owner, turn, tts_model = t.cascade_turn, t.owner, t.turn, t.tts_model
    characters, agent_ms, agent_end, tts_cache_hit = (
        t.characters,
        t.agent_ms,
        t.agent_end,
        t.tts_cache_hit,
    )
    tts = np.flatnonzero(cascade_turn)
    builder.add(
        "tts.usage",
        owner[tts],
        agent_end[tts],
        {
            "provider": _labels(tuple(m[0] for m in TTS_MODELS), tts_model[tts]),
            "model": _labels(tuple(m[1] for m in TTS_MODELS), tts_model[tts]),
            "turn_index": turn[tts],
            "characters": characters[tts],
            "_ms": agent_ms[tts],
            "cache_hit": tts_cache_hit[tts],
        },
    )
    builder.frames["tts.usage"] = (
        builder.frames["tts.usage"]
        .with_columns(audio_seconds=_fixed(pl.col("_ms"), 3))
        .drop("_ms")
        .select(*KEY_COLUMNS, *EVENT_FIELDS["tts.usage"][5:])
    )


def _add_realtime(builder: _Builder, rng: np.random.Generator, t: _Turns) -> None:
    """realtime.usage: the session resends its whole audio context every turn; the provider's
    prefix cache serves what it has seen (exclusive buckets: input excludes the cached part)."""
    total, owner, first, turn, realtime_turn = t.total, t.owner, t.first, t.turn, t.realtime_turn
    user_ms, agent_ms, user_tokens, output_tokens = (
        t.user_ms,
        t.agent_ms,
        t.user_tokens,
        t.output_tokens,
    )
    system, agent_end, rt_model = t.system, t.agent_end, t.rt_model
    user_audio = np.round(user_ms / 1000 * REALTIME_INPUT_AUDIO_TOKENS_PER_SECOND).astype(np.int64)
    agent_audio = np.round(agent_ms / 1000 * REALTIME_OUTPUT_AUDIO_TOKENS_PER_SECOND).astype(
        np.int64
    )
    audio_history = _exclusive_cumsum(
        np.where(realtime_turn, user_audio + agent_audio, 0), first, owner
    )
    text_history = _exclusive_cumsum(
        np.where(realtime_turn, user_tokens + output_tokens, 0), first, owner
    )
    instructions = system // 2
    audio_cached = np.where(rng.random(total) < 0.88, _floor_block(audio_history), 0)
    text_total = instructions + text_history
    text_cached = np.where(rng.random(total) < 0.9, _floor_block(text_total), 0)
    rt = np.flatnonzero(realtime_turn)
    builder.add(
        "realtime.usage",
        owner[rt],
        agent_end[rt],
        {
            "provider": _labels(tuple(m[0] for m in REALTIME_MODELS), rt_model[rt]),
            "model": _labels(tuple(m[1] for m in REALTIME_MODELS), rt_model[rt]),
            "turn_index": turn[rt],
            "input_audio_tokens": (audio_history + user_audio - audio_cached)[rt],
            "cached_input_audio_tokens": audio_cached[rt],
            "input_text_tokens": (text_total - text_cached)[rt],
            "cached_input_text_tokens": text_cached[rt],
            "output_audio_tokens": agent_audio[rt],
            "output_text_tokens": output_tokens[rt],
        },
    )


def _add_interruptions(builder: _Builder, t: _Turns, barge_in_hangup: np.ndarray) -> None:
    interrupted, spoken_share, realtime_turn, canned = (
        t.interrupted,
        t.spoken_share,
        t.realtime_turn,
        t.canned,
    )
    false_interruption = t.false_interruption
    agent_ms, output_tokens, characters, owner, turn, agent_end = (
        t.agent_ms,
        t.output_tokens,
        t.characters,
        t.owner,
        t.turn,
        t.agent_end,
    )
    agent_audio = np.round(agent_ms / 1000 * REALTIME_OUTPUT_AUDIO_TOKENS_PER_SECOND).astype(
        np.int64
    )
    hit = np.flatnonzero(interrupted)
    unspoken = 1.0 - spoken_share[hit]
    wasted_tokens = np.where(
        realtime_turn[hit],
        np.round(agent_audio[hit] * unspoken),
        np.where(canned[hit], 0, np.round(output_tokens[hit] * unspoken)),
    ).astype(np.int64)
    wasted_chars = np.where(realtime_turn[hit], 0, np.round(characters[hit] * unspoken)).astype(
        np.int64
    )
    builder.add(
        "turn.interrupted",
        owner[hit],
        agent_end[hit],
        {
            "turn_index": turn[hit] + barge_in_hangup[hit],
            "wasted_output_tokens": wasted_tokens,
            "wasted_tts_characters": wasted_chars,
            "is_false_interruption": false_interruption[hit],
        },
    )


def _add_shadow_decisions(builder: _Builder, rng: np.random.Generator, t: _Turns) -> None:
    """SPEC 11: the candidate's decision on every turn, recorded when the turn's audio ends."""
    owner, turn, tenant, segment_ms, agent_end = (
        t.owner,
        t.turn,
        t.tenant,
        t.segment_ms,
        t.agent_end,
    )
    interrupted, false_interruption = t.interrupted, t.false_interruption
    decisions = shadow_decisions(
        rng, tenant, segment_ms[:, SEGMENTS.index("endpointing")], interrupted, false_interruption
    )
    none = np.zeros(len(turn), dtype=np.int64)
    builder.add(
        "turn.shadow",
        owner,
        agent_end,
        {
            "turn_index": turn,
            "candidate": _labels((SHADOW_CANDIDATE,), none),
            "kind": _labels((SHADOW_KIND,), none),
            "_us": decisions.endpointing_us,
            "would_interrupt": decisions.would_interrupt,
            "is_false_interruption": decisions.is_false_interruption,
        },
    )
    builder.frames["turn.shadow"] = (
        builder.frames["turn.shadow"]
        .with_columns(endpointing_ms=_fixed(pl.col("_us"), 3))
        .drop("_us")
    )


def _channel_of(tenants: tuple[TenantProfile, ...], tenant: np.ndarray) -> np.ndarray:
    return np.array([CHANNELS.index(p.channel) for p in tenants], dtype=np.int64)[tenant]


def finalise(
    generated: Generated, tenants: tuple[TenantProfile, ...], rng: np.random.Generator
) -> Iterator[tuple[str, pl.DataFrame]]:
    """Each event type's frame with the common fields (ids, names, `occurred_at`) added, in
    contract order, one type at a time (the generated frame is released as it is consumed).

    Ids come from their own generator, drawn in a fixed order (sessions, then event types in
    contract order), so they never disturb the traffic draws.
    """
    session_ids = random_uuids(rng, generated.sessions)
    tenant_ids = pl.Series([p.tenant_id for p in tenants], dtype=pl.String)
    session_tenant = pl.Series(generated.session_tenant, dtype=pl.Int64)
    local_offset = pl.Series(SOURCE_USES_LOCAL_OFFSET, dtype=pl.Boolean)
    for event_type in EVENT_TYPES:
        frame = generated.frames.pop(event_type, None)
        if frame is None or frame.height == 0:
            continue
        sessions = frame["_sess"]
        frame = frame.with_columns(
            event_id=random_uuids(rng, frame.height),
            source=_labels(SOURCES, frame["_src"].to_numpy()),
            _local=local_offset.gather(frame["_src"]),
        ).with_columns(
            occurred_at=_timestamp(pl.col("_ts"), pl.col("_local")),
            tenant_id=tenant_ids.gather(session_tenant.gather(sessions)),
            session_id=session_ids.gather(sessions),
        )
        yield event_type, frame.select(*KEY_COLUMNS, *EVENT_FIELDS[event_type])
