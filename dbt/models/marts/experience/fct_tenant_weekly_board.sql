{{ config(materialized='incremental', unique_key='week_start_date') }}
{#-
    The weekly board: margin (from the finance mart, unchanged, so the two never disagree) and
    experience (rates, latency, capacity) on one row per tenant and ISO week (SPEC 6): the
    false interruption rate and the cache hit rates are read next to the money they move.
-#}
with

margin as (
    select * from {{ ref('fct_tenant_weekly_margin') }} {{ refresh_filter('week_start_date', 'week') }}
),

tenant_experience as (
    select * from {{ ref('int_tenant_experience_aggregated') }} {{ refresh_filter('coalesce(business_date, week_start_date)', 'week') }}
),

latency_budget as (
    select * from {{ ref('fct_latency_budget_weekly') }} {{ refresh_filter('week_start_date', 'week') }}
),

capacity as (
    select * from {{ ref('fct_capacity_tenant_hourly') }} {{ refresh_filter('business_date', 'week') }}
),

experience as (
    select * from tenant_experience
    where grain = 'week'
),

-- The first-audio line of the budget table carries the headline and the breach owner.
first_audio as (
    select * from latency_budget
    where segment = 'first_audio'
),

-- Hours belong to the ISO week of their local start.
peak_capacity as (
    select
        tenant_id,
        {{ iso_week_label('business_date') }} as iso_week,
        max(peak_concurrent_sessions) as peak_concurrent_sessions,
        max(p95_concurrent_sessions) as max_hourly_p95_concurrent_sessions,
        sum(session_seconds) as active_session_seconds,
    from capacity
    group by all
),

final as (
    select
        margin.*,
        {{ board_experience_columns() }}
    from margin
    left join experience
        on margin.tenant_id = experience.tenant_id
        and margin.iso_week = experience.iso_week
    left join first_audio
        on margin.tenant_id = first_audio.tenant_id
        and margin.iso_week = first_audio.iso_week
    left join peak_capacity
        on margin.tenant_id = peak_capacity.tenant_id
        and margin.iso_week = peak_capacity.iso_week
)

select * from final
