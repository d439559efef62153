{{ config(materialized='incremental', unique_key='business_date', partition_week_of='business_date') }}
{#-
    Peak and P95 concurrent sessions per tenant and hour (SPEC 6), for every pipeline together
    (pipeline NULL) and for each pipeline apart (SPEC 11: cascade sessions are the ASR/TTS pools'
    paths), from the step functions of active sessions. Hours are UTC hours (exact for whole-hour zones such as Asia/Shanghai, and
    free of DST folds), labelled with their local start, business date and hour of day. Only hours
    in which at least one session was active are listed.

    P95 is time-weighted: the smallest level the tenant stayed at or below for at least 95% of
    the hour (57 of 60 minutes), counting time with no session as level 0. A count of paths has
    no meaningful interpolation, so this is a level that actually occurred.
-#}
with

concurrency_steps as (
    select * from {{ ref('int_tenant_concurrency_stepped') }}
    {{ refresh_overlap_filter('valid_from', 'valid_to') }}
),

-- A step that crosses an hour boundary contributes to every hour it touches.
step_hours as (
    select
        tenant_id,
        pipeline,
        concurrent_sessions,
        valid_from,
        valid_to,
        {{ hour_starts('valid_from', 'valid_to') }} as hour_start_at,
    from concurrency_steps
),

hour_pieces as (
    select
        tenant_id,
        pipeline,
        hour_start_at,
        concurrent_sessions,
        epoch_us(least(valid_to, hour_start_at + interval 1 hour))
        - epoch_us(greatest(valid_from, hour_start_at)) as duration_us,
    from step_hours
),

active_levels as (
    select
        tenant_id,
        pipeline,
        hour_start_at,
        concurrent_sessions,
        sum(duration_us) as duration_us,
    from hour_pieces
    group by tenant_id, pipeline, hour_start_at, concurrent_sessions
),

idle_levels as (
    select
        tenant_id,
        pipeline,
        hour_start_at,
        0 as concurrent_sessions,
        3600000000 - sum(duration_us) as duration_us,
    from active_levels
    group by tenant_id, pipeline, hour_start_at
),

levels as (
    select * from active_levels

    union all

    select * from idle_levels
    where duration_us > 0
),

cumulative_levels as (
    select
        *,
        sum(duration_us) over (
            partition by tenant_id, pipeline, hour_start_at
            order by concurrent_sessions
            rows between unbounded preceding and current row
        ) as cumulative_us,
    from levels
),

hourly as (
    select
        tenant_id,
        pipeline,
        hour_start_at,
        max(concurrent_sessions) as peak_concurrent_sessions,
        -- 95% of 3 600 000 000 us.
        min(concurrent_sessions) filter (where cumulative_us >= 3420000000)
            as p95_concurrent_sessions,
        sum(concurrent_sessions * duration_us) as session_us,
    from cumulative_levels
    group by tenant_id, pipeline, hour_start_at
),

final as (
    select
        tenant_id,
        pipeline,
        hour_start_at,
        {{ to_reporting_time('hour_start_at') }} as local_hour_start,
        {{ to_business_date('hour_start_at') }} as business_date,
        cast(hour({{ to_reporting_time('hour_start_at') }}) as integer) as local_hour,
        cast(peak_concurrent_sessions as integer) as peak_concurrent_sessions,
        cast(p95_concurrent_sessions as integer) as p95_concurrent_sessions,
        -- Path-seconds in the hour (session time, what path-priced infrastructure bills).
        {{ microseconds_to_seconds('session_us') }} as session_seconds,
        cast(session_us as double) / 3600000000 as avg_concurrent_sessions,
    from hourly
)

select * from final {{ refresh_filter('business_date', 'week') }}
