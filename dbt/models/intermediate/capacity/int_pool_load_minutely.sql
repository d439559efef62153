{#-
    Load on the shared GPU pools per tenant and UTC minute with usage (SPEC 11, seed 8.2): the
    sessions of `int_pool_load_session_minutely` added up. A table over the whole history, so
    that every minute holds every session's usage whichever sessions a build recomputed.
-#}
with

session_minutes as (
    select * from {{ ref('int_pool_load_session_minutely') }}
),

final as (
    select
        tenant_id,
        minute_start_at,
        cast(sum(llm_tokens) as bigint) as llm_tokens,
        cast(sum(llm_cached_input_tokens) as bigint) as llm_cached_input_tokens,
        cast(sum(vision_images) as bigint) as vision_images,
        cast(sum(encoder_images) as bigint) as encoder_images,
        cast(sum(image_tokens) as bigint) as image_tokens,
    from session_minutes
    group by tenant_id, minute_start_at
)

select * from final
