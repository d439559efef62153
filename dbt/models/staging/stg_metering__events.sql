with

events as (
    select * from {{ source('raw', 'events') }}
),

final as (
    select * from events
)

select * from final
