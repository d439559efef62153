with

events as (
    select * from {{ ref('stg_metering__events') }}
),

final as (
    select
        event_id,
        source,
        occurred_at,
        tenant_id,
        session_id,
        turn_index,
        segment,
        started_at,
        ended_at,
        {{ microseconds_to_milliseconds('epoch_us(ended_at) - epoch_us(started_at)') }}
            as duration_ms,
    from events
    where event_type = 'turn.latency'
)

select * from final
