{{ config(materialized='incremental', unique_key='session_id') }}
with

turn_latencies as (
    select * from {{ ref('stg_metering__turn_latencies') }}
),

sessions as (
    select * from {{ ref('int_sessions_resolved') }} {{ refresh_filter('session_id') }}
),

-- The contract expects one measurement per turn and segment, but nothing stops an emitter from
-- reporting a segment twice under two event ids. Such a segment is read as the span it covered
-- (earliest enter to latest leave), so a repeated report can never hide latency.
segments_merged as (
    select
        session_id,
        turn_index,
        segment,
        min(started_at) as started_at,
        max(ended_at) as ended_at,
        count(*) as measurement_count,
    from turn_latencies
    group by session_id, turn_index, segment
),

final as (
    select
        segments_merged.session_id,
        segments_merged.turn_index,
        sessions.tenant_id,
        sessions.scenario,
        sessions.pipeline,
        sessions.is_replay,
        sessions.business_date,
        sessions.iso_week,
        sessions.week_start_date,
        segments_merged.segment,
        segments_merged.started_at,
        segments_merged.ended_at,
        {{ microseconds_to_milliseconds(
            'epoch_us(segments_merged.ended_at) - epoch_us(segments_merged.started_at)') }}
            as duration_ms,
        segments_merged.measurement_count,
    from segments_merged
    inner join sessions
        on segments_merged.session_id = sessions.session_id
)

select * from final
