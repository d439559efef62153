{#-
    The daily board: margin (from the finance mart, unchanged, so the two never disagree) and
    experience (rates, latency, capacity) on one row per tenant and business date (SPEC 6): the
    false interruption rate and the cache hit rates are read next to the money they move.
-#}
with

margin as (
    select * from {{ ref('fct_tenant_daily_margin') }}
),

tenant_experience as (
    select * from {{ ref('int_tenant_experience_aggregated') }}
),

latency_budget as (
    select * from {{ ref('fct_latency_budget_tenant_daily') }}
),

capacity as (
    select * from {{ ref('fct_capacity_tenant_hourly') }}
),

experience as (
    select * from tenant_experience
    where grain = 'day'
),

-- The first-audio line of the budget table carries the headline and the breach owner.
first_audio as (
    select * from latency_budget
    where segment = 'first_audio'
),

-- Hours belong to the business date of their local start.
peak_capacity as (
    select
        tenant_id,
        business_date as business_date,
        max(peak_concurrent_sessions) as peak_concurrent_sessions,
        max(p95_concurrent_sessions) as max_hourly_p95_concurrent_sessions,
        sum(session_seconds) as active_session_seconds,
    from capacity
    group by all
),

final as (
    select
        margin.*,
        experience.turns,
        experience.interrupted_turns,
        experience.false_interrupted_turns,
        experience.interruption_rate,
        experience.false_interruption_rate,
        experience.prefix_cache_hit_rate,
        experience.tts_phrase_cache_hit_rate,
        experience.vision_cache_hit_rate,
        experience.degraded_sessions,
        experience.degradation_rate,
        experience.degradation_rate_realtime_to_cascade,
        experience.degradation_rate_asr_to_dtmf,
        experience.degradation_rate_tts_filler,
        experience.degradation_rate_vision_clamp,
        experience.degradation_rate_provider_failover,
        first_audio.turns as latency_turns,
        first_audio.measured_turns as first_audio_turns,
        first_audio.p50_ms as first_audio_p50_ms,
        first_audio.p95_ms as first_audio_p95_ms,
        first_audio.budget_ms as first_audio_budget_ms,
        first_audio.over_budget_share as first_audio_over_budget_share,
        first_audio.p95_budget_ratio as first_audio_p95_budget_ratio,
        first_audio.is_p95_over_budget as is_first_audio_p95_over_budget,
        first_audio.worst_segment_at_p95,
        first_audio.breach_owner,
        peak_capacity.peak_concurrent_sessions,
        peak_capacity.max_hourly_p95_concurrent_sessions,
        peak_capacity.active_session_seconds,
    from margin
    left join experience
        on margin.tenant_id = experience.tenant_id
        and margin.business_date = experience.business_date
    left join first_audio
        on margin.tenant_id = first_audio.tenant_id
        and margin.business_date = first_audio.business_date
    left join peak_capacity
        on margin.tenant_id = peak_capacity.tenant_id
        and margin.business_date = peak_capacity.business_date
)

select * from final
