-- SPEC 13: each spend budget (spend_budgets.csv) in the reporting currency, converted at the FX
-- rate in effect on the month's first day (the rate finance planned with).
with

spend_budgets as (
    select * from {{ ref('stg_reference__spend_budgets') }}
),

fx_rates as (
    select * from {{ ref('stg_reference__fx_rates') }}
),

converted as (
    select
        spend_budgets.*,
        case
            when spend_budgets.currency = '{{ var("reporting_currency") }}' then 1
            else fx.fx_rate
        end as fx_rate,
    from spend_budgets
    {{ asof_left_join('fx_rates', 'fx', 'spend_budgets.currency = fx.currency',
        'spend_budgets.budget_month', 'rate_date', 'currency') }}
),

final as (
    select
        spend_budget_line_number,
        tenant_id,
        budget_month,
        provider,
        amount,
        currency as budget_currency,
        cast(fx_rate as decimal(38, 12)) as fx_rate,
        cast(amount * fx_rate as decimal(38, 12)) as budget_amount,
        '{{ var("reporting_currency") }}' as currency,
    from converted
)

select * from final
