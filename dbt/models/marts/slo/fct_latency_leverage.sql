-- SPEC 13 leverage: per profile and tenant, each segment's share of first-audio time at P50 and at
-- P95 over the SLO window, ranked: where a millisecond saved matters most. Only complete turns
-- (all five segments measured) count, so every share is of the same turns.
with

turn_segments as (
    select * from {{ ref('int_slo_turn_segments') }}
    where age_us < cast({{ var('slo_window_days') }} as bigint) * 86400 * 1000000
),

complete_turns as (
    select
        session_id,
        turn_index,
    from turn_segments
    where segment = 'first_audio'
),

segments as (
    select turn_segments.*
    from turn_segments
    inner join complete_turns
        on turn_segments.session_id = complete_turns.session_id
        and turn_segments.turn_index = complete_turns.turn_index
    where turn_segments.segment <> 'first_audio'
),

-- Linear interpolation, as every latency quantile of the ledger (DOUBLE ms, to the microsecond).
quantiles as (
    select
        profile,
        tenant_id,
        segment,
        min(segment_order) as segment_order,
        min(owner) as owner,
        min(budget_ms) as budget_ms,
        count(*) as turns,
        round(quantile_cont(cast(duration_ms as double), 0.5), 3) as p50_ms,
        round(quantile_cont(cast(duration_ms as double), 0.95), 3) as p95_ms,
    from segments
    group by profile, tenant_id, segment
),

first_audio_budgets as (
    select
        profile,
        tenant_id,
        min(budget_ms) as first_audio_budget_ms,
    from turn_segments
    where segment = 'first_audio'
    group by profile, tenant_id
),

-- A share is of the five segments' quantiles added up, so the shares of a tenant add up to 1
-- (quantiles do not add up to the first-audio quantile, their order is the same). The budget
-- share is of the first-audio budget (the segments' budgets may leave slack under it).
final as (
    select
        quantiles.profile,
        quantiles.tenant_id,
        quantiles.segment,
        quantiles.segment_order,
        quantiles.owner,
        quantiles.budget_ms,
        quantiles.turns,
        quantiles.p50_ms,
        quantiles.p95_ms,
        quantiles.p50_ms / nullif(sum(quantiles.p50_ms) over (
            partition by quantiles.profile, quantiles.tenant_id
        ), 0) as p50_share,
        quantiles.p95_ms / nullif(sum(quantiles.p95_ms) over (
            partition by quantiles.profile, quantiles.tenant_id
        ), 0) as p95_share,
        cast(quantiles.budget_ms as double)
        / first_audio_budgets.first_audio_budget_ms as budget_share,
        -- BIGINT on both engines (Spark's rank is INT).
        cast(rank() over (
            partition by quantiles.profile, quantiles.tenant_id order by quantiles.p50_ms desc
        ) as bigint) as p50_rank,
        cast(rank() over (
            partition by quantiles.profile, quantiles.tenant_id order by quantiles.p95_ms desc
        ) as bigint) as p95_rank,
    from quantiles
    inner join first_audio_budgets
        on quantiles.profile = first_audio_budgets.profile
        and quantiles.tenant_id = first_audio_budgets.tenant_id
)

select * from final
