-- SPEC 13: every measured turn segment (and first audio) of the last SLO window, with the
-- profile and objective of its SLO and its age at the evaluation instant.
{%- set longest_rule = var('burn_rate_rules') | map(attribute='long_seconds') | max -%}
{%- set horizon_seconds = [var('slo_window_days') * 86400, longest_rule] | max %}
with

turn_segments as (
    select * from {{ ref('int_turn_segments_budgeted') }}
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

aged as (
    select
        measured.profile,
        measured.tenant_id,
        measured.segment,
        measured.segment_order,
        measured.owner,
        measured.objective,
        measured.session_id,
        measured.turn_index,
        measured.turn_started_at,
        measured.duration_ms,
        measured.budget_ms,
        evaluated_at.evaluated_at,
        epoch_us(evaluated_at.evaluated_at) - epoch_us(measured.turn_started_at) as age_us,
        measured.is_over_budget as is_bad,
    from measured
    cross join evaluated_at
),

final as (
    select * from aged
    where age_us < cast({{ horizon_seconds }} as bigint) * 1000000
)

select * from final
