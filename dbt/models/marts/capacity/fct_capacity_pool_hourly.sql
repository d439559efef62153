{{ config(materialized='incremental', unique_key='business_date', partition_week_of='business_date') }}
{#-
    What each shared pool scales on, per UTC hour, per tenant (scope 'tenant') and for all tenants
    together (scope 'overall', tenant_id NULL) (SPEC 11, seed 8.2):
      - LLM pool: tokens per second (uncached input + output), the hour's mean and, over its
        sixty 1-minute windows, the peak and the P95 (idle minutes count as 0);
      - vision encoder: images per second that missed the embedding cache, peak and P95 over the
        1-minute windows (bursts), and all images per second at peak (what the encoder would see
        with no cache);
      - ASR/TTS pools: concurrent paths, peak and P95: the concurrent sessions of the cascade
        pipeline only (an end-to-end realtime session holds no ASR or TTS path), beside the
        concurrent sessions of every pipeline and of the realtime pipeline, from
        fct_capacity_tenant_hourly (tenant scope only: peaks of tenants do not add up, so the
        overall row leaves them NULL). An hour in which the tenant had sessions but none of a
        pipeline counts 0 for it.
    Rates are DOUBLE (load, not money), rounded to 6 places; quantiles are linear interpolation.

    Incremental refresh: the hours of the refreshed ISO weeks (by business date) are recomputed
    from the minutes and concurrency hours around them (both complete by then).
-#}
with

minutes as (
    select * from {{ ref('int_pool_load_minutely') }}
    {{ refresh_overlap_filter('minute_start_at', 'minute_start_at') }}
),

tenant_concurrency as (
    select * from {{ ref('fct_capacity_tenant_hourly') }}
    {{ refresh_overlap_filter('hour_start_at', 'hour_start_at') }}
),

-- One row per tenant and hour: every pipeline (pipeline NULL), then each pool's pipeline.
concurrency as (
    select
        tenant_id,
        hour_start_at,
        max(peak_concurrent_sessions) filter (where pipeline is null) as peak_concurrent_sessions,
        max(p95_concurrent_sessions) filter (where pipeline is null) as p95_concurrent_sessions,
        coalesce(max(peak_concurrent_sessions) filter (where pipeline = 'cascade'), 0)
            as peak_concurrent_paths,
        coalesce(max(p95_concurrent_sessions) filter (where pipeline = 'cascade'), 0)
            as p95_concurrent_paths,
        coalesce(max(peak_concurrent_sessions) filter (where pipeline = 'realtime'), 0)
            as peak_concurrent_realtime_sessions,
        coalesce(max(p95_concurrent_sessions) filter (where pipeline = 'realtime'), 0)
            as p95_concurrent_realtime_sessions,
    from tenant_concurrency
    group by tenant_id, hour_start_at
),

scoped_minutes as (
    select
        'tenant' as scope,
        tenant_id,
        minute_start_at,
        llm_tokens,
        vision_images,
        encoder_images,
        image_tokens,
    from minutes

    union all

    select
        'overall' as scope,
        null as tenant_id,
        minute_start_at,
        sum(llm_tokens) as llm_tokens,
        sum(vision_images) as vision_images,
        sum(encoder_images) as encoder_images,
        sum(image_tokens) as image_tokens,
    from minutes
    group by minute_start_at
),

hours as (
    select distinct
        scope,
        tenant_id,
        date_trunc('hour', minute_start_at) as hour_start_at,
    from scoped_minutes

    union

    select
        'tenant' as scope,
        tenant_id,
        hour_start_at,
    from concurrency
),

-- Every minute of every listed hour, so an idle minute is a 0 in the quantiles.
minute_grid as (
    select
        hours.scope,
        hours.tenant_id,
        hours.hour_start_at,
        {{ add_minutes('hours.hour_start_at', 'minute_offset') }} as minute_start_at,
    from hours
    -- The alias names the column (sqlfluff's AL05 sees no use of it).
    cross join range(60) as offsets (minute_offset)  -- noqa: AL05
),

minute_loads as (
    select
        minute_grid.scope,
        minute_grid.tenant_id,
        minute_grid.hour_start_at,
        coalesce(scoped_minutes.llm_tokens, 0) as llm_tokens,
        coalesce(scoped_minutes.vision_images, 0) as vision_images,
        coalesce(scoped_minutes.encoder_images, 0) as encoder_images,
        coalesce(scoped_minutes.image_tokens, 0) as image_tokens,
    from minute_grid
    left join scoped_minutes
        on minute_grid.scope = scoped_minutes.scope
        and minute_grid.tenant_id is not distinct from scoped_minutes.tenant_id
        and minute_grid.minute_start_at = scoped_minutes.minute_start_at
),

hourly as (
    select
        scope,
        tenant_id,
        hour_start_at,
        cast(sum(llm_tokens) as bigint) as llm_tokens,
        cast(sum(vision_images) as bigint) as vision_images,
        cast(sum(encoder_images) as bigint) as encoder_images,
        cast(sum(image_tokens) as bigint) as image_tokens,
        round(sum(llm_tokens) / 3600, 6) as llm_tokens_per_second_mean,
        round(max(llm_tokens) / 60, 6) as llm_tokens_per_second_peak,
        round(quantile_cont(llm_tokens / 60, 0.95), 6) as llm_tokens_per_second_p95,
        round(max(encoder_images) / 60, 6) as encoder_images_per_second_peak,
        round(quantile_cont(encoder_images / 60, 0.95), 6) as encoder_images_per_second_p95,
        round(max(vision_images) / 60, 6) as vision_images_per_second_peak,
    from minute_loads
    group by all
),

final as (
    select
        hourly.scope,
        hourly.tenant_id,
        hourly.hour_start_at,
        {{ to_reporting_time('hourly.hour_start_at') }} as local_hour_start,
        {{ to_business_date('hourly.hour_start_at') }} as business_date,
        {{ iso_week_label(to_business_date('hourly.hour_start_at')) }} as iso_week,
        {{ iso_week_start(to_business_date('hourly.hour_start_at')) }} as week_start_date,
        hourly.llm_tokens,
        hourly.llm_tokens_per_second_mean,
        hourly.llm_tokens_per_second_peak,
        hourly.llm_tokens_per_second_p95,
        hourly.vision_images,
        hourly.encoder_images,
        hourly.image_tokens,
        hourly.encoder_images_per_second_peak,
        hourly.encoder_images_per_second_p95,
        hourly.vision_images_per_second_peak,
        concurrency.peak_concurrent_paths,
        concurrency.p95_concurrent_paths,
        concurrency.peak_concurrent_sessions,
        concurrency.p95_concurrent_sessions,
        concurrency.peak_concurrent_realtime_sessions,
        concurrency.p95_concurrent_realtime_sessions,
    from hourly
    left join concurrency
        on hourly.scope = 'tenant'
        and hourly.tenant_id = concurrency.tenant_id
        and hourly.hour_start_at = concurrency.hour_start_at
)

select * from final {{ refresh_filter('business_date', 'week') }}
