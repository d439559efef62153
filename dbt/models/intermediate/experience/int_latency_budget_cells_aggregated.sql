{{ config(materialized='incremental', unique_key='coalesce(business_date, week_start_date)') }}
{#-
    The latency budget table at its three grains in one pass (SPEC 6), so the three marts cannot
    drift apart: `grain` is 'tenant_day', 'scenario_day' or 'tenant_week'; keys that are not part
    of a row's grain are NULL.

    Quantiles are linear interpolation (`quantile_cont`, the same as numpy method="linear") on
    DOUBLE milliseconds, rounded to the microsecond: latency is not money, and quantile_cont on
    DECIMAL input truncates instead of interpolating.
-#}
with

turn_segments as (
    select * from {{ ref('int_turn_segments_budgeted') }}
        {{ refresh_filter('business_date', 'week') }}
),

-- Recorded traffic only: a replayed copy (SPEC 11) is load, not a tenant's experience.
recorded_segments as (
    select * from turn_segments
    where not is_replay
),

cells as (
    select
        case
            when grouping(business_date) = 1 then 'tenant_week'
            when grouping(tenant_id) = 1 then 'scenario_day'
            else 'tenant_day'
        end as grain,
        tenant_id,
        scenario,
        business_date,
        iso_week,
        week_start_date,
        segment,
        segment_order,
        -- Every turn of the cell has one row per segment, measured or not.
        count(*) as turns,
        count(duration_ms) as measured_turns,
        round(quantile_cont(cast(duration_ms as double), 0.5), 3) as p50_ms,
        round(quantile_cont(cast(duration_ms as double), 0.95), 3) as p95_ms,
        -- A cell mixes budgets when its turns follow different profiles (two scenarios of a
        -- tenant, tenants with and without an override): budget_ms is then NULL and the
        -- per-turn ratio below still compares each turn with its own budget.
        min(budget_ms) as min_budget_ms,
        max(budget_ms) as max_budget_ms,
        {{ ordered_string_agg('owner', "'/'", 'owner', distinct=true) }} as owner,
        count(*) filter (where is_over_budget) as over_budget_turns,
        round(quantile_cont(cast(overshoot_ms as double), 0.95), 3) as p95_overshoot_ms,
        round(quantile_cont(budget_ratio, 0.95), 6) as p95_budget_ratio,
    from recorded_segments
    group by grouping sets (
        (tenant_id, business_date, segment, segment_order),
        (scenario, business_date, segment, segment_order),
        (tenant_id, iso_week, week_start_date, segment, segment_order)
    )
),

-- "Who owns the breach": the segment whose P95 overshoots its budget most, relative to the
-- budget (P95 of duration / budget; with one budget in the cell that is p95_ms / budget_ms).
-- Ties go to the earlier segment in the pipeline.
worst_segments as (
    select
        grain,
        tenant_id,
        scenario,
        business_date,
        iso_week,
        segment as worst_segment_at_p95,
        owner as worst_segment_owner,
        p95_budget_ratio as worst_p95_budget_ratio,
    from cells
    where segment <> 'first_audio'
        and p95_budget_ratio is not null
    qualify row_number() over (
        partition by grain, tenant_id, scenario, business_date, iso_week
        order by p95_budget_ratio desc, segment_order asc
    ) = 1
),

final as (
    select
        cells.grain,
        cells.tenant_id,
        cells.scenario,
        cells.business_date,
        cells.iso_week,
        cells.week_start_date,
        cells.segment,
        cells.segment_order,
        cells.owner,
        case
            when cells.min_budget_ms = cells.max_budget_ms then cells.min_budget_ms
        end as budget_ms,
        cells.min_budget_ms,
        cells.max_budget_ms,
        cells.turns,
        cells.measured_turns,
        cells.p50_ms,
        cells.p95_ms,
        cells.over_budget_turns,
        cells.over_budget_turns / nullif(cells.measured_turns, 0) as over_budget_share,
        cells.p95_overshoot_ms,
        cells.p95_budget_ratio,
        cells.p95_budget_ratio > 1 as is_p95_over_budget,
        coalesce(cells.segment = worst_segments.worst_segment_at_p95, false)
            as is_worst_segment_at_p95,
        worst_segments.worst_segment_at_p95,
        worst_segments.worst_segment_owner,
        worst_segments.worst_p95_budget_ratio,
        -- Only a segment whose P95 is actually over its budget has a breach to own.
        case
            when worst_segments.worst_p95_budget_ratio > 1
                then worst_segments.worst_segment_owner
        end as breach_owner,
    from cells
    left join worst_segments
        on cells.grain = worst_segments.grain
        and cells.tenant_id is not distinct from worst_segments.tenant_id
        and cells.scenario is not distinct from worst_segments.scenario
        and cells.business_date is not distinct from worst_segments.business_date
        and cells.iso_week is not distinct from worst_segments.iso_week
)

select * from final
