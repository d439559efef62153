with

provider_aliases as (
    select * from {{ source('reference', 'provider_aliases') }}
),

final as (
    select
        line_number as alias_line_number,
        lower(seen) as seen_key,
        provider,
    from provider_aliases
)

select * from final
