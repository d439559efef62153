{{ config(materialized='incremental', unique_key='usage_date') }}
{#-
    Load on the shared GPU pools per tenant and UTC minute with usage (SPEC 11, seed 8.2): the
    sessions of `int_pool_load_session_minutely` added up; usage_date is the minute's UTC date.

    Incremental refresh: the minutes of the refreshed ISO weeks (by usage_date) are added up again
    from every session's minutes of those weeks (the per-session table is complete by then), so
    each minute holds every session's usage whichever sessions a build recomputed. A refreshed
    session's minutes lie on its events' UTC dates, which the refresh weeks cover.
-#}
with

session_minutes as (
    select * from {{ ref('int_pool_load_session_minutely') }}
    {{ refresh_overlap_filter('minute_start_at', 'minute_start_at') }}
),

final as (
    select
        tenant_id,
        cast(minute_start_at as date) as usage_date,
        minute_start_at,
        cast(sum(llm_tokens) as bigint) as llm_tokens,
        cast(sum(llm_cached_input_tokens) as bigint) as llm_cached_input_tokens,
        cast(sum(vision_images) as bigint) as vision_images,
        cast(sum(encoder_images) as bigint) as encoder_images,
        cast(sum(image_tokens) as bigint) as image_tokens,
    from session_minutes
    group by tenant_id, minute_start_at
)

select * from final {{ refresh_filter('usage_date', 'week') }}
