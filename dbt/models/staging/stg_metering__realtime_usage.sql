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
        input_audio_tokens,
        cached_input_audio_tokens,
        input_text_tokens,
        cached_input_text_tokens,
        output_audio_tokens,
        output_text_tokens,
    from events
    where event_type = 'realtime.usage'
)

select * from final
