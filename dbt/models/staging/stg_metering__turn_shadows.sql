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
        candidate,
        kind,
        endpointing_ms,
        would_interrupt,
        is_false_interruption,
    from events
    where event_type = 'turn.shadow'
)

select * from final
