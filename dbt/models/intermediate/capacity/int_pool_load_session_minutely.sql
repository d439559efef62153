{{ config(materialized='incremental', unique_key='session_id') }}
{#-
    Load on the shared GPU pools per session and UTC minute (SPEC 11, seed 8.2), kept per session
    so that an incremental build replaces the rows of the sessions it recomputes (staging then
    holds only their events); `int_pool_load_minutely` adds the sessions of each minute up. A usage event
    counts in the minute it was reported. The LLM pool processes uncached input and output tokens
    (a prefix-cache hit skips the prefill: its tokens are listed apart); the vision encoder
    processes the images that missed the embedding cache. Only minutes with usage are listed.
-#}
with

llm_usage as (
    select * from {{ ref('stg_metering__llm_usage') }}
),

vision_usage as (
    select * from {{ ref('stg_metering__vision_usage') }}
),

llm_minutes as (
    select
        tenant_id,
        session_id,
        date_trunc('minute', occurred_at) as minute_start_at,
        sum(input_tokens + output_tokens) as llm_tokens,
        sum(cached_input_tokens) as llm_cached_input_tokens,
    from llm_usage
    group by all
),

vision_minutes as (
    select
        tenant_id,
        session_id,
        date_trunc('minute', occurred_at) as minute_start_at,
        sum(images) as vision_images,
        coalesce(sum(images) filter (where not cache_hit), 0) as encoder_images,
        sum(image_tokens) as image_tokens,
    from vision_usage
    group by all
),

final as (
    select
        coalesce(llm_minutes.tenant_id, vision_minutes.tenant_id) as tenant_id,
        coalesce(llm_minutes.session_id, vision_minutes.session_id) as session_id,
        coalesce(llm_minutes.minute_start_at, vision_minutes.minute_start_at) as minute_start_at,
        cast(coalesce(llm_minutes.llm_tokens, 0) as bigint) as llm_tokens,
        cast(coalesce(llm_minutes.llm_cached_input_tokens, 0) as bigint) as llm_cached_input_tokens,
        cast(coalesce(vision_minutes.vision_images, 0) as bigint) as vision_images,
        cast(coalesce(vision_minutes.encoder_images, 0) as bigint) as encoder_images,
        cast(coalesce(vision_minutes.image_tokens, 0) as bigint) as image_tokens,
    from llm_minutes
    full outer join vision_minutes
        on llm_minutes.tenant_id = vision_minutes.tenant_id
        and llm_minutes.session_id is not distinct from vision_minutes.session_id
        and llm_minutes.minute_start_at = vision_minutes.minute_start_at
)

select * from final
