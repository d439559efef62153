-- Who owns each latency segment (the latency budget table names them).
with

latency_budgets as (
    select * from {{ ref('stg_reference__latency_budgets') }}
),

final as (
    select
        segment,
        min(owner) as owner,
    from latency_budgets
    group by segment
)

select * from final
