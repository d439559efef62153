{{ config(materialized='incremental', unique_key='session_id') }}
{%- set kinds = [
    {'name': 'output', 'meters': ['llm.output_tokens', 'realtime.output_audio_tokens'],
     'wasted': 'wasted_output_tokens'},
    {'name': 'tts', 'meters': ['tts.characters'], 'wasted': 'wasted_tts_characters'},
] -%}

with

interruptions as (
    select * from {{ ref('stg_metering__turn_interruptions') }}
),

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('session_id') }}
),

{% for kind in kinds %}
{{ kind.name }}_usage as (
    select
        session_id,
        turn_index,
        occurred_at,
        source,
        event_id,
        unit_price_reporting,
    from usage_lines
    where meter in ('{{ kind.meters | join("', '") }}')
),

-- SPEC 5: the usage of that kind in the same session and turn (the latest, if several); with
-- none in the turn, the latest in the session at or before the interruption.
{{ kind.name }}_matches as (
    select
        interruptions.source as interruption_source,
        interruptions.event_id as interruption_event_id,
        {{ kind.name }}_usage.event_id as usage_event_id,
        {{ kind.name }}_usage.source as usage_source,
        {{ kind.name }}_usage.unit_price_reporting,
        case
            when {{ kind.name }}_usage.turn_index = interruptions.turn_index then 'same_turn'
            else 'session_fallback'
        end as match_rule,
    from interruptions
    inner join {{ kind.name }}_usage
        on interruptions.session_id = {{ kind.name }}_usage.session_id
        and (
            {{ kind.name }}_usage.turn_index = interruptions.turn_index
            or {{ kind.name }}_usage.occurred_at <= interruptions.occurred_at
        )
    qualify row_number() over (
        partition by interruptions.source, interruptions.event_id
        order by
            coalesce({{ kind.name }}_usage.turn_index = interruptions.turn_index, false) desc,
            {{ kind.name }}_usage.occurred_at desc,
            {{ kind.name }}_usage.source desc,
            {{ kind.name }}_usage.event_id desc
    ) = 1
),

{% endfor %}
priced as (
    select
        interruptions.event_id,
        interruptions.source,
        interruptions.session_id,
        interruptions.tenant_id,
        interruptions.occurred_at,
        interruptions.turn_index,
        interruptions.is_false_interruption,
        {%- for kind in kinds %}
        interruptions.{{ kind.wasted }},
        {{ kind.name }}_matches.usage_event_id as {{ kind.name }}_usage_event_id,
        {{ kind.name }}_matches.match_rule as {{ kind.name }}_match_rule,
        {{ kind.name }}_matches.unit_price_reporting as {{ kind.name }}_unit_price_reporting,
        case
            when interruptions.{{ kind.wasted }} = 0 then null
            when {{ kind.name }}_matches.usage_event_id is null then 'no_{{ kind.name }}_usage'
            when {{ kind.name }}_matches.unit_price_reporting is null
                then '{{ kind.name }}_usage_unpriced'
        end as {{ kind.name }}_unpriced_reason,
        case
            when interruptions.{{ kind.wasted }} = 0 then {{ money(0) }}
            else {{ money(
                'interruptions.' ~ kind.wasted ~ ' * '
                ~ kind.name ~ '_matches.unit_price_reporting') }}
        end as {{ kind.name }}_waste_amount,
        {%- endfor %}
    from interruptions
    {%- for kind in kinds %}
    left join {{ kind.name }}_matches
        on interruptions.source = {{ kind.name }}_matches.interruption_source
        and interruptions.event_id = {{ kind.name }}_matches.interruption_event_id
    {%- endfor %}
),

final as (
    select
        event_id,
        source,
        session_id,
        tenant_id,
        occurred_at,
        turn_index,
        is_false_interruption,
        wasted_output_tokens,
        output_usage_event_id,
        output_match_rule,
        output_unit_price_reporting,
        wasted_tts_characters,
        tts_usage_event_id,
        tts_match_rule,
        tts_unit_price_reporting,
        '{{ var("reporting_currency") }}' as currency,
        output_waste_amount,
        tts_waste_amount,
        coalesce(output_unpriced_reason, tts_unpriced_reason) is null as is_priced,
        coalesce(output_unpriced_reason, tts_unpriced_reason) as unpriced_reason,
        case
            when coalesce(output_unpriced_reason, tts_unpriced_reason) is null
                then output_waste_amount + tts_waste_amount
        end as waste_amount,
    from priced
)

select * from final
