{{ config(materialized='incremental', unique_key='business_date') }}
with

budget_cells as (
    select * from {{ ref('int_latency_budget_cells_aggregated') }}
        {{ refresh_filter('coalesce(business_date, week_start_date)', 'week') }}
),

final as (
    select
        tenant_id,
        business_date,
        segment,
        segment_order,
        owner,
        budget_ms,
        min_budget_ms,
        max_budget_ms,
        turns,
        measured_turns,
        p50_ms,
        p95_ms,
        over_budget_turns,
        over_budget_share,
        p95_overshoot_ms,
        p95_budget_ratio,
        is_p95_over_budget,
        is_worst_segment_at_p95,
        worst_segment_at_p95,
        worst_segment_owner,
        breach_owner,
    from budget_cells
    where grain = 'tenant_day'
)

select * from final
