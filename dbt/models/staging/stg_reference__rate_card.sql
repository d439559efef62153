with

rate_card as (
    select * from {{ source('reference', 'rate_card') }}
),

final as (
    select
        line_number as rate_card_line_number,
        provider,
        model,
        meter,
        price,
        per,
        currency,
        effective_from,
        effective_to,
        unit_price,
    from rate_card
)

select * from final
