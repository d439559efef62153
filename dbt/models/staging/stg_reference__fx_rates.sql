with

fx_rates as (
    select * from {{ source('reference', 'fx_rates') }}
),

final as (
    select
        rate_date,
        currency,
        rate as fx_rate,
    from fx_rates
)

select * from final
