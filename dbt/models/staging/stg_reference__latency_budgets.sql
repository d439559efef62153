with

latency_budgets as (
    select * from {{ source('reference', 'latency_budgets') }}
),

final as (
    select
        scenario,
        tenant_id,
        segment,
        budget_ms,
        owner,
        profile,
        objective,
    from latency_budgets
)

select * from final
