{{ config(materialized='incremental', unique_key='session_id') }}
with

measured_segments as (
    select * from {{ ref('int_turn_segments_measured') }} {{ refresh_filter('session_id') }}
),

latency_budgets as (
    select * from {{ ref('stg_reference__latency_budgets') }}
),

-- The five contract segments in pipeline order, then the first-audio total (SPEC 4 and 6).
segment_catalogue as (
    select *
    from (
        values
            ('endpointing', 1),
            ('stt_final', 2),
            ('llm_ttft', 3),
            ('tts_first_frame', 4),
            ('network_playback', 5),
            ('first_audio', 6)
    -- The alias names the columns (sqlfluff's AL05 sees no use of it).
    ) as catalogue (segment, segment_order)  -- noqa: AL05
),

turns as (
    select
        session_id,
        turn_index,
        tenant_id,
        scenario,
        pipeline,
        is_replay,
        business_date,
        iso_week,
        week_start_date,
        min(started_at) as turn_started_at,
        count(*) as segments_measured,
        sum(duration_ms) as measured_duration_ms,
    from measured_segments
    group by all
),

-- Every turn gets all six rows, so a segment that was not measured still shows its budget and
-- still counts in the turn total of its cell. SPEC 6: first audio is the sum of the five segment
-- durations, only when all five are present; taken from the turn's own aggregate, as Spark
-- inlines a CTE at each reference and a second aggregate would read the segments again.
turn_segments as (
    select
        turns.*,
        segment_catalogue.segment,
        segment_catalogue.segment_order,
        case
            when segment_catalogue.segment <> 'first_audio' then measured_segments.duration_ms
            when turns.segments_measured = 5 then turns.measured_duration_ms
        end as duration_ms,
    from turns
    cross join segment_catalogue
    left join measured_segments
        on turns.session_id = measured_segments.session_id
        and turns.turn_index = measured_segments.turn_index
        and segment_catalogue.segment = measured_segments.segment
),

default_budgets as (
    select * from latency_budgets
    where tenant_id is null
),

-- Tenant rows are already merged over the scenario defaults by the reference loader: a tenant
-- with an override has a full set of rows, so the lookup is coalesce(tenant row, default row).
tenant_budgets as (
    select * from latency_budgets
    where tenant_id is not null
),

budgeted as (
    select
        turn_segments.*,
        coalesce(tenant_budgets.budget_ms, default_budgets.budget_ms) as budget_ms,
        coalesce(tenant_budgets.owner, default_budgets.owner) as owner,
        -- SPEC 13: the SLO this turn segment counts in (its profile) and the objective.
        coalesce(tenant_budgets.profile, default_budgets.profile) as profile,
        coalesce(tenant_budgets.objective, default_budgets.objective) as objective,
        case
            when tenant_budgets.budget_ms is not null then 'tenant_override'
            when default_budgets.budget_ms is not null then 'scenario_default'
        end as budget_source,
    from turn_segments
    left join default_budgets
        on turn_segments.scenario = default_budgets.scenario
        and turn_segments.segment = default_budgets.segment
    left join tenant_budgets
        on turn_segments.scenario = tenant_budgets.scenario
        and turn_segments.segment = tenant_budgets.segment
        and turn_segments.tenant_id = tenant_budgets.tenant_id
),

final as (
    select
        session_id,
        turn_index,
        tenant_id,
        scenario,
        pipeline,
        is_replay,
        business_date,
        iso_week,
        week_start_date,
        turn_started_at,
        segments_measured,
        segment,
        segment_order,
        duration_ms,
        budget_ms,
        owner,
        profile,
        objective,
        budget_source,
        duration_ms > budget_ms as is_over_budget,
        -- Latency is not money: the ratio is DOUBLE. It makes budgets of different sizes
        -- comparable (60 ms of playback vs 300 ms of LLM) when attributing a breach.
        case
            when budget_ms > 0 then cast(duration_ms as double) / budget_ms
        end as budget_ratio,
        duration_ms - budget_ms as overshoot_ms,
    from budgeted
)

select * from final
