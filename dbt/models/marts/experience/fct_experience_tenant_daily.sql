{{ config(materialized='incremental', unique_key='business_date') }}
{%- set degradation_kinds = var('degradation_kinds') -%}
with

tenant_experience as (
    select * from {{ ref('int_tenant_experience_aggregated') }}
        {{ refresh_filter('coalesce(business_date, week_start_date)', 'week') }}
),

tenant_daily_margin as (
    select * from {{ ref('fct_tenant_daily_margin') }} {{ refresh_filter('business_date', 'week') }}
),

-- Recorded traffic only, like the experience counts (a replayed copy is load, SPEC 11).
daily_margin as (
    select * from tenant_daily_margin
    where not is_replay
),

daily_experience as (
    select * from tenant_experience
    where grain = 'day'
),

final as (
    select
        daily_experience.tenant_id,
        daily_experience.business_date,
        {{ iso_week_label('daily_experience.business_date') }} as iso_week,
        {{ iso_week_start('daily_experience.business_date') }} as week_start_date,
        daily_experience.sessions,
        daily_experience.turns,
        daily_experience.interrupted_turns,
        daily_experience.false_interrupted_turns,
        daily_experience.interruption_rate,
        daily_experience.false_interruption_rate,
        daily_experience.input_tokens,
        daily_experience.cached_input_tokens,
        daily_experience.prefix_cache_hit_rate,
        daily_experience.tts_characters,
        daily_experience.cached_tts_characters,
        daily_experience.tts_phrase_cache_hit_rate,
        daily_experience.vision_images,
        daily_experience.cached_vision_images,
        daily_experience.vision_cache_hit_rate,
        daily_experience.degradations,
        daily_experience.degraded_sessions,
        daily_experience.degradation_rate,
        {%- for kind in degradation_kinds %}
        daily_experience.degraded_sessions_{{ kind }},
        daily_experience.degradation_rate_{{ kind }},
        {%- endfor %}
        -- The money the rates above move, straight from the finance mart (SPEC 8.3: an
        -- interruption is a cost event, a cache hit is margin).
        daily_margin.currency,
        daily_margin.interruption_waste_cost,
        daily_margin.unpriced_interruption_count,
        daily_margin.cache_savings,
        daily_margin.llm_cache_savings,
        daily_margin.realtime_cache_savings,
        daily_margin.tts_cache_savings,
        daily_margin.vision_cache_savings,
    from daily_experience
    left join daily_margin
        on daily_experience.tenant_id = daily_margin.tenant_id
        and daily_experience.business_date = daily_margin.business_date
)

select * from final
