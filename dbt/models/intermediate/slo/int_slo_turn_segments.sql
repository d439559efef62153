-- SPEC 13: every measured turn segment (and first audio) of the last SLO window, with the
-- profile and objective of its SLO and its age at the evaluation instant.
{%- set longest_rule = var('burn_rate_rules') | map(attribute='long_seconds') | max -%}
{%- set horizon_seconds = [var('slo_window_days') * 86400, longest_rule] | max %}
with

turn_segments as (
    select * from {{ ref('int_turn_segments_budgeted') }}
),

latency_budgets as (
    select * from {{ ref('stg_reference__latency_budgets') }}
),

-- Replayed copies are load tests, not customers' turns; an unmeasured segment is neither good nor
-- bad (a missing first audio says nothing about its budget).
measured as (
    select * from turn_segments
    where not is_replay and duration_ms is not null
),

-- The evaluation instant: the newest measured turn. On live data that is now; on a recorded month
-- it is where the month ends, so the windows always hold data.
evaluated_at as (
    select max(turn_started_at) as evaluated_at from measured
),

default_budgets as (
    select * from latency_budgets
    where tenant_id is null
),

tenant_budgets as (
    select * from latency_budgets
    where tenant_id is not null
),

final as (
    select
        coalesce(tenant_budgets.profile, default_budgets.profile) as profile,
        measured.tenant_id,
        measured.segment,
        measured.segment_order,
        measured.owner,
        coalesce(tenant_budgets.objective, default_budgets.objective) as objective,
        measured.session_id,
        measured.turn_index,
        measured.turn_started_at,
        evaluated_at.evaluated_at,
        epoch_us(evaluated_at.evaluated_at) - epoch_us(measured.turn_started_at) as age_us,
        measured.is_over_budget as is_bad,
    from measured
    cross join evaluated_at
    left join default_budgets
        on measured.scenario = default_budgets.scenario
        and measured.segment = default_budgets.segment
    left join tenant_budgets
        on measured.scenario = tenant_budgets.scenario
        and measured.segment = tenant_budgets.segment
        and measured.tenant_id = tenant_budgets.tenant_id
    where
        epoch_us(evaluated_at.evaluated_at) - epoch_us(measured.turn_started_at)
        < cast({{ horizon_seconds }} as bigint) * 1000000
)

select * from final
