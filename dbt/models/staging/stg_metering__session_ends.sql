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
        end_reason,
    from events
    where event_type = 'session.ended'
)

select * from final
