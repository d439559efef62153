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
        kind,
        turn_index,
        reason,
    from events
    where event_type = 'session.degraded'
)

select * from final
