-- SPEC 13: per budget profile x segment (and first audio) x tenant, the SLI over the rolling
-- window against the objective, and the error budget left.
with

turn_segments as (
    select * from {{ ref('int_slo_turn_segments') }}
    where age_us < cast({{ var('slo_window_days') }} as bigint) * 86400 * 1000000
),

counted as (
    select
        profile,
        tenant_id,
        segment,
        min(segment_order) as segment_order,
        min(owner) as owner,
        min(objective) as objective,
        min(evaluated_at) as evaluated_at,
        count(*) as turns,
        count(*) filter (where is_bad) as bad_turns,
    from turn_segments
    group by profile, tenant_id, segment
),

final as (
    select
        profile,
        tenant_id,
        segment,
        segment_order,
        owner,
        objective,
        {{ var('slo_window_days') }} as window_days,
        evaluated_at,
        turns,
        turns - bad_turns as good_turns,
        bad_turns,
        cast(turns - bad_turns as double) / turns as sli,
        -- Error budget = (1 - objective) x turns: the bad turns the objective allows. Exact
        -- (DECIMAL x BIGINT), so 5% of 20 turns is exactly 1.
        cast((1 - objective) * turns as decimal(38, 4)) as error_budget_turns,
        case
            when (1 - objective) * turns > 0
                then 1 - cast(bad_turns as double) / cast((1 - objective) * turns as double)
        end as error_budget_remaining,
        cast(turns - bad_turns as double) / turns >= cast(objective as double) as is_objective_met,
    from counted
)

select * from final
