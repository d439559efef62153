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
        audio_seconds,
    from events
    where event_type = 'asr.usage'
)

select * from final
