-- SPEC 13: each owner team's SLOs over every tenant (per profile and segment): what the team is
-- answerable for as a whole, next to fct_latency_slo's per-tenant rows. Each tenant's turns are
-- judged against its own objective: the team's error budget is the sum of its tenants' budgets
-- (never the loosest objective over every tenant's turns), and `objective` is the one its tenants
-- share, NULL when they differ.
with

slos as (
    select * from {{ ref('fct_latency_slo') }}
),

counted as (
    select
        owner,
        profile,
        segment,
        min(segment_order) as segment_order,
        case when min(objective) = max(objective) then min(objective) end as objective,
        sum(error_budget_turns) as error_budget_turns,
        min(evaluated_at) as evaluated_at,
        count(*) as tenants,
        -- BIGINT on both engines (DuckDB's sum of BIGINT is HUGEINT): the contract names one.
        cast(sum(turns) as bigint) as turns,
        cast(sum(bad_turns) as bigint) as bad_turns,
        count(*) filter (where not is_objective_met) as tenants_missing_objective,
    from slos
    where owner is not null
    group by owner, profile, segment
),

final as (
    select
        owner,
        profile,
        segment,
        segment_order,
        objective,
        {{ var('slo_window_days') }} as window_days,
        evaluated_at,
        tenants,
        tenants_missing_objective,
        turns,
        bad_turns,
        {{ budget_slo_figures('turns', 'bad_turns', 'error_budget_turns') }},
    from counted
)

select * from final
