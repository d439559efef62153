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
        scenario,
        channel,
        pipeline,
        agent_id,
        language,
        region,
    from events
    where event_type = 'session.started'
)

select * from final
