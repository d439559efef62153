{{ config(materialized='incremental', unique_key='coalesce(business_date, week_start_date)') }}
{#-
    Experience counts and rates per tenant and business date ('day') and per tenant and ISO week
    ('week') in one pass, so the daily mart and the weekly board share one definition (SPEC 6).
    Rates are shares between 0 and 1 (DOUBLE: they are not money) and NULL when the denominator
    is 0: "no turns" is not "no interruptions".
-#}
{%- set degradation_kinds = var('degradation_kinds') -%}
with

session_experience as (
    select * from {{ ref('int_session_experience_aggregated') }}
        {{ refresh_filter('business_date', 'week') }}
),

-- Recorded traffic only: a replayed copy (SPEC 11) is load, not a tenant's experience.
recorded_experience as (
    select * from session_experience
    where not is_replay
),

counted as (
    select
        case when grouping(business_date) = 1 then 'week' else 'day' end as grain,
        tenant_id,
        business_date,
        iso_week,
        week_start_date,
        count(*) as sessions,
        cast(sum(turn_count) as bigint) as turns,
        cast(sum(interrupted_turns) as bigint) as interrupted_turns,
        cast(sum(false_interrupted_turns) as bigint) as false_interrupted_turns,
        cast(sum(input_tokens) as bigint) as input_tokens,
        cast(sum(cached_input_tokens) as bigint) as cached_input_tokens,
        cast(sum(tts_characters) as bigint) as tts_characters,
        cast(sum(cached_tts_characters) as bigint) as cached_tts_characters,
        cast(sum(vision_images) as bigint) as vision_images,
        cast(sum(cached_vision_images) as bigint) as cached_vision_images,
        cast(sum(degradation_count) as bigint) as degradations,
        count(*) filter (where is_degraded) as degraded_sessions,
        {%- for kind in degradation_kinds %}
        count(*) filter (where is_degraded_{{ kind }}) as degraded_sessions_{{ kind }},
        {%- endfor %}
    from recorded_experience
    group by grouping sets (
        (tenant_id, business_date),
        (tenant_id, iso_week, week_start_date)
    )
),

final as (
    select
        *,
        interrupted_turns / nullif(turns, 0) as interruption_rate,
        false_interrupted_turns / nullif(interrupted_turns, 0) as false_interruption_rate,
        cached_input_tokens / nullif(input_tokens, 0) as prefix_cache_hit_rate,
        cached_tts_characters / nullif(tts_characters, 0) as tts_phrase_cache_hit_rate,
        cached_vision_images / nullif(vision_images, 0) as vision_cache_hit_rate,
        degraded_sessions / nullif(sessions, 0) as degradation_rate,
        {%- for kind in degradation_kinds %}
        degraded_sessions_{{ kind }} / nullif(sessions, 0) as degradation_rate_{{ kind }},
        {%- endfor %}
    from counted
)

select * from final
