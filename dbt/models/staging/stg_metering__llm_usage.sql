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
        input_tokens,
        cached_input_tokens,
        output_tokens,
        phase,
        route,
    from events
    where event_type = 'llm.usage'
)

select * from final
