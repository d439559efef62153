with

meta as (
    select * from {{ source('reference', 'meta') }}
),

final as (
    select
        reporting_currency,
        loaded_at,
        reference_dir,
        content_sha256,
    from meta
)

select * from final
