with

events as (
    select * from {{ ref('stg_metering__events') }}
),

-- The contract keeps 6 places; the ledger's money is decimal(38, 12) from here on.
final as (
    select
        event_id,
        source,
        tenant_id,
        session_id,
        occurred_at,
        provider,
        component,
        model,
        turn_index,
        item,
        {{ money('amount') }} as amount,
        currency,
    from events
    where event_type = 'cost.reported'
)

select * from final
