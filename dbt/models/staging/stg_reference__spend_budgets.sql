with

spend_budgets as (
    select * from {{ source('reference', 'spend_budgets') }}
),

final as (
    select
        line_number as spend_budget_line_number,
        tenant_id,
        budget_month,
        amount,
        currency,
        provider,
    from spend_budgets
)

select * from final
