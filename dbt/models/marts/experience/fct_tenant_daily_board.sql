{{ config(materialized='incremental', unique_key='business_date') }}
{#-
    The daily board: margin (from the finance mart, unchanged, so the two never disagree) and
    experience (rates, latency, capacity) on one row per tenant and business date (SPEC 6): the
    false interruption rate and the cache hit rates are read next to the money they move.
-#}
with

margin as (
    select * from {{ ref('fct_tenant_daily_margin') }} {{ refresh_filter('business_date', 'week') }}
),

tenant_experience as (
    select * from {{ ref('int_tenant_experience_aggregated') }} {{ refresh_filter('coalesce(business_date, week_start_date)', 'week') }}
),

latency_budget as (
    select * from {{ ref('fct_latency_budget_tenant_daily') }} {{ refresh_filter('business_date', 'week') }}
),

capacity as (
    select * from {{ ref('fct_capacity_tenant_hourly') }} {{ refresh_filter('business_date', 'week') }}
),

experience as (
    select * from tenant_experience
    where grain = 'day'
),

-- The first-audio line of the budget table carries the headline and the breach owner.
first_audio as (
    select * from latency_budget
    where segment = 'first_audio'
),

-- Hours belong to the business date of their local start.
peak_capacity as (
    select
        tenant_id,
        business_date as business_date,
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
        and margin.business_date = experience.business_date
    left join first_audio
        on margin.tenant_id = first_audio.tenant_id
        and margin.business_date = first_audio.business_date
    left join peak_capacity
        on margin.tenant_id = peak_capacity.tenant_id
        and margin.business_date = peak_capacity.business_date
)

select * from final
