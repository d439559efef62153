with

model_aliases as (
    select * from {{ source('reference', 'model_aliases') }}
),

final as (
    select
        line_number as alias_line_number,
        provider,
        lower(seen) as seen_key,
        model,
    from model_aliases
)

select * from final
