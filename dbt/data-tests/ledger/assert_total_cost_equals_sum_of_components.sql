-- SPEC 5: total_cost is the sum of the six component costs, exactly, on every session row.
with

session_ledger as (
    select * from {{ ref('fct_session_ledger') }} {{ refresh_filter('session_id') }}
),

final as (
    select
        session_id,
        total_cost,
        asr_cost + llm_cost + tts_cost + realtime_cost + vision_cost + infra_cost
            as sum_of_components,
    from session_ledger
    where total_cost is distinct from (
        asr_cost + llm_cost + tts_cost + realtime_cost + vision_cost + infra_cost
    )
)

select * from final
