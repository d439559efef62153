with

events as (
    select * from {{ refresh_events_relation(
        source('raw', 'events'), source('ops', 'refresh_events')
    ) }}
),

final as (
    select * from events
)

select * from final
