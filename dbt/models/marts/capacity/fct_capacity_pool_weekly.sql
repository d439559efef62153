{#-
    The weekly trend of fct_capacity_pool_hourly (SPEC 11), per scope and tenant and ISO week:
    the week's peak of each pool's metric and the P95 of its hourly peaks (what a pool sized for
    all but the busiest 5% of hours must carry), the change of the LLM peak against the week
    before, and the vision embedding cache sizing rule of seed 8.2:
      cache bytes = hot-set images x image tokens per image (measured this week)
                    x embedding dimensions x bytes per value (reference planning settings),
    computed on integers and rounded half up to a whole byte. Every 10 points of cache hit rate
    take 10% of all images off the encoder: at the week's peak, 0.1 x all images per second.
-#}
with

hourly as (
    select * from {{ ref('fct_capacity_pool_hourly') }}
),

planning as (
    select * from {{ ref('stg_reference__capacity_planning') }}
),

weekly as (
    select
        scope,
        tenant_id,
        iso_week,
        week_start_date,
        count(*) as hours,
        cast(sum(llm_tokens) as bigint) as llm_tokens,
        max(llm_tokens_per_second_peak) as llm_tokens_per_second_peak,
        round(quantile_cont(llm_tokens_per_second_peak, 0.95), 6)
            as llm_tokens_per_second_p95_hourly_peak,
        cast(sum(vision_images) as bigint) as vision_images,
        cast(sum(encoder_images) as bigint) as encoder_images,
        cast(sum(image_tokens) as bigint) as image_tokens,
        max(encoder_images_per_second_peak) as encoder_images_per_second_peak,
        round(quantile_cont(encoder_images_per_second_peak, 0.95), 6)
            as encoder_images_per_second_p95_hourly_peak,
        max(vision_images_per_second_peak) as vision_images_per_second_peak,
        max(peak_concurrent_paths) as peak_concurrent_paths,
        round(quantile_cont(peak_concurrent_paths, 0.95), 6) as concurrent_paths_p95_hourly_peak,
        max(peak_concurrent_sessions) as peak_concurrent_sessions,
        max(peak_concurrent_realtime_sessions) as peak_concurrent_realtime_sessions,
    from hourly
    group by all
),

final as (
    select
        weekly.*,
        weekly.vision_images - weekly.encoder_images as cached_vision_images,
        (weekly.vision_images - weekly.encoder_images) / nullif(weekly.vision_images, 0)
            as vision_cache_hit_rate,
        round(
            100 * (
                weekly.llm_tokens_per_second_peak
                / nullif(lag(weekly.llm_tokens_per_second_peak) over (
                    partition by weekly.scope, weekly.tenant_id order by weekly.week_start_date
                ), 0)
                - 1
            ),
            2
        ) as llm_tokens_per_second_peak_change_pct,
        planning.hot_set_images,
        planning.embedding_dimensions,
        planning.bytes_per_value,
        case
            when weekly.vision_images > 0 then cast(
                {{ integer_divide(
                    '2 * cast(planning.hot_set_images as hugeint) * weekly.image_tokens
                    * planning.embedding_dimensions * planning.bytes_per_value
                    + weekly.vision_images',
                    '2 * weekly.vision_images'
                ) }} as hugeint
            )
        end as vision_cache_bytes,
        round(weekly.vision_images_per_second_peak * 0.1, 6)
            as encoder_images_per_second_saved_per_10_points,
    from weekly
    cross join planning
)

select * from final
