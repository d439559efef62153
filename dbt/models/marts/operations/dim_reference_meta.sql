-- The reference data in effect: reporting currency and the files it was loaded from.
with

meta as (
    select * from {{ ref('stg_reference__meta') }}
),

final as (
    select * from meta
)

select * from final
