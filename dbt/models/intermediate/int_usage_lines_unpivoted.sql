{{ config(materialized='incremental', unique_key='session_id') }}
{#-
    One row per usage event and meter it carries (SPEC 4: the meters of the rate card). The
    cached meters of LLM and realtime name the full-price meter their savings are measured against;
    a TTS or vision cache hit is measured against its own meter and bills nothing. An optional
    meter (a `tts.usage`'s token counts, contract v1.2) is a line only where the event carries it;
    which of a TTS event's meters is billed is the rate card's to say (int_usage_lines_priced).
-#}
{%- set meters = [
    {'cte': 'asr_usage', 'component': 'asr', 'meter': 'asr.audio_seconds',
     'quantity': 'audio_seconds'},
    {'cte': 'llm_usage', 'component': 'llm', 'meter': 'llm.input_tokens',
     'quantity': 'input_tokens'},
    {'cte': 'llm_usage', 'component': 'llm', 'meter': 'llm.cached_input_tokens',
     'quantity': 'cached_input_tokens', 'savings_meter': 'llm.input_tokens'},
    {'cte': 'llm_usage', 'component': 'llm', 'meter': 'llm.output_tokens',
     'quantity': 'output_tokens'},
    {'cte': 'tts_usage', 'component': 'tts', 'meter': 'tts.characters',
     'quantity': 'characters', 'cache_hit': 'cache_hit'},
    {'cte': 'tts_usage', 'component': 'tts', 'meter': 'tts.input_tokens',
     'quantity': 'input_tokens', 'cache_hit': 'cache_hit', 'optional': true},
    {'cte': 'tts_usage', 'component': 'tts', 'meter': 'tts.output_audio_tokens',
     'quantity': 'output_audio_tokens', 'cache_hit': 'cache_hit', 'optional': true},
    {'cte': 'realtime_usage', 'component': 'realtime', 'meter': 'realtime.input_audio_tokens',
     'quantity': 'input_audio_tokens'},
    {'cte': 'realtime_usage', 'component': 'realtime',
     'meter': 'realtime.cached_input_audio_tokens', 'quantity': 'cached_input_audio_tokens',
     'savings_meter': 'realtime.input_audio_tokens'},
    {'cte': 'realtime_usage', 'component': 'realtime', 'meter': 'realtime.input_text_tokens',
     'quantity': 'input_text_tokens'},
    {'cte': 'realtime_usage', 'component': 'realtime',
     'meter': 'realtime.cached_input_text_tokens', 'quantity': 'cached_input_text_tokens',
     'savings_meter': 'realtime.input_text_tokens'},
    {'cte': 'realtime_usage', 'component': 'realtime', 'meter': 'realtime.output_audio_tokens',
     'quantity': 'output_audio_tokens'},
    {'cte': 'realtime_usage', 'component': 'realtime', 'meter': 'realtime.output_text_tokens',
     'quantity': 'output_text_tokens'},
    {'cte': 'vision_usage', 'component': 'vision', 'meter': 'vision.images',
     'quantity': 'images', 'cache_hit': 'cache_hit'},
    {'cte': 'infra_usage', 'component': 'infra', 'meter': "'infra.' || unit",
     'quantity': 'quantity', 'model': 'resource', 'expression_meter': true},
] -%}

with

asr_usage as (
    select * from {{ ref('stg_metering__asr_usage') }}
),

llm_usage as (
    select * from {{ ref('stg_metering__llm_usage') }}
),

tts_usage as (
    select * from {{ ref('stg_metering__tts_usage') }}
),

realtime_usage as (
    select * from {{ ref('stg_metering__realtime_usage') }}
),

vision_usage as (
    select * from {{ ref('stg_metering__vision_usage') }}
),

infra_usage as (
    select * from {{ ref('stg_metering__infra_usage') }}
),

unpivoted as (
    {%- for m in meters %}
    select
        event_id,
        source,
        session_id,
        tenant_id,
        occurred_at,
        '{{ m.component }}' as component,
        provider,
        {{ m.get('model', 'model') }} as model,
        {{ 'turn_index' if m.cte != 'infra_usage' else 'cast(null as bigint)' }} as turn_index,
        {{ 'phase' if m.cte == 'llm_usage' else 'cast(null as varchar)' }} as phase,
        {{ 'route' if m.cte == 'llm_usage' else 'cast(null as varchar)' }} as route,
        {{ m.meter if m.get('expression_meter') else "'" ~ m.meter ~ "'" }} as meter,
        cast({{ m.quantity }} as decimal(38, 6)) as quantity,
        {{ m.get('cache_hit', 'false') }} as is_cache_hit,
        {%- if m.get('savings_meter') %}
        '{{ m.savings_meter }}' as savings_reference_meter,
        {%- elif m.get('cache_hit') %}
        case when {{ m.cache_hit }} then '{{ m.meter }}' end as savings_reference_meter,
        {%- else %}
        cast(null as varchar) as savings_reference_meter,
        {%- endif %}
    from {{ m.cte }}
    {%- if m.get('optional') %}
    where {{ m.quantity }} is not null
    {%- endif %}
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
),

final as (
    select
        *,
        -- SPEC 5: a TTS or vision cache hit costs 0.
        case when is_cache_hit then cast(0 as decimal(38, 6)) else quantity end
            as billed_quantity,
    from unpivoted
)

select * from final
