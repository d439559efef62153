{{ config(materialized='incremental', unique_key='session_id') }}
{%- set degradation_kinds = var('degradation_kinds') -%}
with

sessions as (
    select * from {{ ref('int_sessions_resolved') }} {{ refresh_filter('session_id') }}
),

turn_interruptions as (
    select * from {{ ref('stg_metering__turn_interruptions') }}
),

llm_usage as (
    select * from {{ ref('stg_metering__llm_usage') }}
),

realtime_usage as (
    select * from {{ ref('stg_metering__realtime_usage') }}
),

tts_usage as (
    select * from {{ ref('stg_metering__tts_usage') }}
),

vision_usage as (
    select * from {{ ref('stg_metering__vision_usage') }}
),

session_degradations as (
    select * from {{ ref('stg_metering__session_degradations') }}
),

-- Interruptions are counted per turn: a turn reported interrupted twice is one interrupted turn,
-- so the interruption rate (interrupted turns / turns) stays a share. A turn is a false
-- interruption when any of its reports says so.
interruptions as (
    select
        session_id,
        count(distinct turn_index) as interrupted_turns,
        count(distinct turn_index) filter (where is_false_interruption)
            as false_interrupted_turns,
    from turn_interruptions
    group by session_id
),

-- Token buckets are exclusive (SPEC 3): all input = uncached + cached.
llm_tokens as (
    select
        session_id,
        cast(sum(input_tokens + cached_input_tokens) as bigint) as input_tokens,
        cast(sum(cached_input_tokens) as bigint) as cached_input_tokens,
    from llm_usage
    group by session_id
),

realtime_tokens as (
    select
        session_id,
        cast(
            sum(
                input_audio_tokens + cached_input_audio_tokens
                + input_text_tokens + cached_input_text_tokens
            ) as bigint
        ) as input_tokens,
        cast(sum(cached_input_audio_tokens + cached_input_text_tokens) as bigint)
            as cached_input_tokens,
    from realtime_usage
    group by session_id
),

tts_characters as (
    select
        session_id,
        cast(sum(characters) as bigint) as characters,
        cast(coalesce(sum(characters) filter (where cache_hit), 0) as bigint) as cached_characters,
    from tts_usage
    group by session_id
),

vision_images as (
    select
        session_id,
        cast(sum(images) as bigint) as images,
        cast(coalesce(sum(images) filter (where cache_hit), 0) as bigint) as cached_images,
    from vision_usage
    group by session_id
),

degradations as (
    select
        session_id,
        count(*) as degradation_count,
        {%- for kind in degradation_kinds %}
        count(*) filter (where kind = '{{ kind }}') > 0 as is_degraded_{{ kind }},
        {%- endfor %}
    from session_degradations
    group by session_id
),

final as (
    select
        sessions.session_id,
        sessions.tenant_id,
        sessions.scenario,
        sessions.pipeline,
        sessions.is_replay,
        sessions.business_date,
        sessions.iso_week,
        sessions.week_start_date,
        sessions.turn_count,
        coalesce(interruptions.interrupted_turns, 0) as interrupted_turns,
        coalesce(interruptions.false_interrupted_turns, 0) as false_interrupted_turns,
        coalesce(llm_tokens.input_tokens, 0) + coalesce(realtime_tokens.input_tokens, 0)
            as input_tokens,
        coalesce(llm_tokens.cached_input_tokens, 0)
        + coalesce(realtime_tokens.cached_input_tokens, 0) as cached_input_tokens,
        coalesce(tts_characters.characters, 0) as tts_characters,
        coalesce(tts_characters.cached_characters, 0) as cached_tts_characters,
        coalesce(vision_images.images, 0) as vision_images,
        coalesce(vision_images.cached_images, 0) as cached_vision_images,
        coalesce(degradations.degradation_count, 0) as degradation_count,
        degradations.session_id is not null as is_degraded,
        {%- for kind in degradation_kinds %}
        coalesce(degradations.is_degraded_{{ kind }}, false) as is_degraded_{{ kind }},
        {%- endfor %}
    from sessions
    left join interruptions
        on sessions.session_id = interruptions.session_id
    left join llm_tokens
        on sessions.session_id = llm_tokens.session_id
    left join realtime_tokens
        on sessions.session_id = realtime_tokens.session_id
    left join tts_characters
        on sessions.session_id = tts_characters.session_id
    left join vision_images
        on sessions.session_id = vision_images.session_id
    left join degradations
        on sessions.session_id = degradations.session_id
)

select * from final
