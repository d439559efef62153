with

price_plans as (
    select * from {{ source('reference', 'price_plans') }}
),

final as (
    select
        line_number as price_plan_line_number,
        tenant_id,
        price_per_minute,
        per_session_fee,
        billing_increment_seconds,
        currency,
        effective_from,
        effective_to,
        price_per_second,
    from price_plans
)

select * from final
