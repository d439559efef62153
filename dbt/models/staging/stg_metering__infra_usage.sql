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
        provider,
        resource,
        quantity,
        unit,
    from events
    where event_type = 'infra.usage'
)

select * from final
