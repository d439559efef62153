{{ config(materialized='incremental', unique_key='session_id', partition_week_of='business_date') }}
{%- set segments = var('segments') + ['first_audio'] -%}
with

turn_segments as (
    select * from {{ ref('int_turn_segments_budgeted') }} {{ refresh_filter('session_id') }}
),

turns as (
    select
        session_id,
        turn_index,
        tenant_id,
        scenario,
        pipeline,
        is_replay,
        business_date,
        iso_week,
        week_start_date,
        turn_started_at,
        segments_measured,
        segments_measured = 5 as is_complete,
        any_value(budget_source) as budget_source,
        -- DECIMAL(38, 3) on both engines (Spark's sum of five segments is 28 digits wide): the
        -- contract names one type.
        {%- for segment in segments %}
        cast(max(duration_ms) filter (where segment = '{{ segment }}') as decimal(38, 3))
            as {{ segment }}_ms,
        {%- endfor %}
        {%- for segment in segments %}
        max(budget_ms) filter (where segment = '{{ segment }}') as {{ segment }}_budget_ms,
        {%- endfor %}
        -- Pipeline order, so the list reads like the turn did.
        {{ ordered_string_agg('segment', "','", 'segment_order',
            filter_where="is_over_budget and segment <> 'first_audio'") }} as over_budget_segments,
        count(*) filter (where is_over_budget and segment <> 'first_audio')
            as over_budget_segment_count,
        bool_or(is_over_budget) filter (where segment = 'first_audio')
            as is_first_audio_over_budget,
    from turn_segments
    group by all
),

final as (
    select * from turns
)

select * from final
