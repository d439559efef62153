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
        {{ slo_figures('turns', 'bad_turns', 'objective') }},
        -- Exact: good >= objective x turns, both sides DECIMAL.
        turns - bad_turns >= objective * turns as is_objective_met,
    from counted
)

select * from final
