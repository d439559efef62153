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
        wasted_output_tokens,
        wasted_tts_characters,
        is_false_interruption,
    from events
    where event_type = 'turn.interrupted'
)

select * from final
