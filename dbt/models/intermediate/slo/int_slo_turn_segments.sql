-- SPEC 13: every measured turn segment (and first audio) of the last SLO window, with the
-- profile and objective of its SLO and its age at its tenant's evaluation instant.
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

ingested_files as (
    select * from {{ source('raw', 'ingested_files') }}
),

newest_ingest as (
    select max(ingested_at) as ingested_at from ingested_files
),

-- The evaluation instant, per tenant (SPEC 13): the tenant's newest measured turn, never later
-- than the newest ingest. On live data that is now; on a recorded month it is where the month
-- ends, so the windows always hold data. Per tenant, so that one tenant's traffic (or one
-- device's clock) never moves another tenant's windows and silences its alerts. (`least` skips
-- the NULL of a warehouse with no ingested file.)
evaluated_at as (
    select
        measured.tenant_id,
        least(max(measured.turn_started_at), max(newest_ingest.ingested_at)) as evaluated_at,
    from measured
    cross join newest_ingest
    group by measured.tenant_id
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
    inner join evaluated_at
        on measured.tenant_id = evaluated_at.tenant_id
),

final as (
    select * from aged
    where age_us < cast({{ horizon_seconds }} as bigint) * 1000000
)

select * from final
