{{ config(materialized='incremental', unique_key='step_date') }}
{#-
    Concurrent sessions per tenant as a step function: one row per interval in which the number of
    active sessions is constant (SPEC 6 and 11), for every pipeline together (pipeline NULL) and
    for each pipeline apart (`cascade` sessions hold ASR and TTS paths; an end-to-end `realtime`
    session holds neither; `unknown` has no session.started). Concurrent sessions of different
    pipelines do not add up to a peak, so each is its own step function. Every step is cut at
    each UTC midnight so that each row lies on one UTC date (`step_date`).

    A session occupies [started_at, ended_at): one that ends at the instant another starts does
    not overlap it. A session still open occupies up to its last event (what is known so far).
    Sessions of zero length occupy no time and are left out.

    Incremental refresh: the rows of the refreshed ISO weeks (by step_date) are recomputed from
    every session that overlaps them, also one that started in an earlier week and carries its
    level in; the steps of other weeks stay. A step changes only where a refreshed session lies,
    and the refresh weeks cover its events' UTC dates a day either side.
-#}
with

sessions as (
    select * from {{ ref('int_sessions_resolved') }}
    {{ refresh_overlap_filter('started_at', 'coalesce(ended_at, last_event_at)') }}
),

intervals as (
    select
        tenant_id,
        pipeline,
        session_id,
        started_at,
        coalesce(ended_at, last_event_at) as ended_at,
    from sessions
    where coalesce(ended_at, last_event_at) > started_at
),

changes as (
    select
        tenant_id,
        pipeline,
        started_at as changed_at,
        1 as delta,
    from intervals

    union all

    select
        tenant_id,
        pipeline,
        ended_at as changed_at,
        -1 as delta,
    from intervals
),

-- Each change counts for its own pipeline and for all pipelines together (pipeline NULL).
scoped_changes as (
    select * from changes

    union all

    select
        tenant_id,
        null as pipeline,
        changed_at,
        delta,
    from changes
),

-- Ends and starts at the same instant net out before the level is read; an instant where they
-- cancel is no change at all.
net_changes as (
    select
        tenant_id,
        pipeline,
        changed_at,
        sum(delta) as delta,
    from scoped_changes
    group by tenant_id, pipeline, changed_at
    having sum(delta) <> 0
),

levels as (
    select
        tenant_id,
        pipeline,
        changed_at as valid_from,
        lead(changed_at) over (partition by tenant_id, pipeline order by changed_at) as valid_to,
        cast(
            sum(delta) over (
                partition by tenant_id, pipeline order by changed_at
                rows between unbounded preceding and current row
            ) as integer
        ) as concurrent_sessions,
    from net_changes
),

steps as (
    select
        tenant_id,
        pipeline,
        valid_from,
        valid_to,
        concurrent_sessions,
    from levels
    where valid_to is not null
        and concurrent_sessions > 0
),

-- A step that crosses UTC midnight is cut there: one row per UTC date it touches.
step_days as (
    select
        tenant_id,
        pipeline,
        valid_from,
        valid_to,
        concurrent_sessions,
        {{ day_starts('valid_from', 'valid_to') }} as day_start_at,
    from steps
),

final as (
    select
        tenant_id,
        pipeline,
        cast(day_start_at as date) as step_date,
        greatest(valid_from, day_start_at) as valid_from,
        least(valid_to, day_start_at + interval 1 day) as valid_to,
        concurrent_sessions,
    from step_days
)

select * from final {{ refresh_filter('step_date', 'week') }}
