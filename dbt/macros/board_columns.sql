{#
    The experience columns of the tenant boards, from the `experience`, `first_audio` and
    `peak_capacity` CTEs that fct_tenant_daily_board and fct_tenant_weekly_board both build at
    their own grain: one list, so the two boards always carry the same figures.
#}
{% macro board_experience_columns() %}
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
{% endmacro %}
