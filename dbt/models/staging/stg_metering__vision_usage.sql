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
        model,
        turn_index,
        images,
        image_tokens,
        cache_hit,
    from events
    where event_type = 'vision.usage'
)

select * from final
