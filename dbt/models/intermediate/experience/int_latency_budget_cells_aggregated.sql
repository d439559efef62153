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
-- Ties go to the earlier segment in the pipeline. A window over the cells rather than a join of
-- them with their own ranking: Spark inlines a CTE at each reference, so a second reference to
-- `cells` would compute its ten percentiles twice.
ranked as (
    select
        *,
        segment <> 'first_audio' and p95_budget_ratio is not null as is_ranked,
    from cells
),

worst_segments as (
    select
        *,
        -- The first row of the cell group is a ranked segment whenever the group has one; the
        -- `case` leaves a group without any ranked segment with NULLs.
        first_value(case when is_ranked then segment end) over cell_group
            as worst_segment_at_p95,
        first_value(case when is_ranked then owner end) over cell_group
            as worst_segment_owner,
        first_value(case when is_ranked then p95_budget_ratio end) over cell_group
            as worst_p95_budget_ratio,
    from ranked
    window cell_group as (
        partition by grain, tenant_id, scenario, business_date, iso_week
        order by is_ranked desc, p95_budget_ratio desc, segment_order asc
    )
),

final as (
    select
        grain,
        tenant_id,
        scenario,
        business_date,
        iso_week,
        week_start_date,
        segment,
        segment_order,
        owner,
        case
            when min_budget_ms = max_budget_ms then min_budget_ms
        end as budget_ms,
        min_budget_ms,
        max_budget_ms,
        turns,
        measured_turns,
        p50_ms,
        p95_ms,
        over_budget_turns,
        over_budget_turns / nullif(measured_turns, 0) as over_budget_share,
        p95_overshoot_ms,
        p95_budget_ratio,
        p95_budget_ratio > 1 as is_p95_over_budget,
        coalesce(segment = worst_segment_at_p95, false) as is_worst_segment_at_p95,
        worst_segment_at_p95,
        worst_segment_owner,
        worst_p95_budget_ratio,
        -- Only a segment whose P95 is actually over its budget has a breach to own.
        case
            when worst_p95_budget_ratio > 1 then worst_segment_owner
        end as breach_owner,
    from worst_segments
)

select * from final
