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
        characters,
        audio_seconds,
        cache_hit,
        input_tokens,
        output_audio_tokens,
    from events
    where event_type = 'tts.usage'
)

select * from final
