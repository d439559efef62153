{{ config(materialized='incremental', unique_key='business_date') }}
{#-
    Incremental refresh: the rows of the refreshed ISO weeks (by the session's business date) are
    recomputed from the sessions of those weeks and their usage lines, read only on the UTC dates
    those sessions have events on (from the planner's index `ops.session_event_dates`, so a line
    is never missed however far from its session's start it lies; on Spark, which has no such
    index, on every date).
-#}
with

{{ refreshed_weeks_sessions_and_usage_lines() }},

llm_lines as (
    select
        usage_lines.*,
        sessions.business_date,
        sessions.iso_week,
        sessions.week_start_date,
        sessions.scenario,
        sessions.pipeline,
        sessions.is_replay,
        coalesce(usage_lines.phase, 'unspecified') as phase_label,
        coalesce(usage_lines.route, 'unspecified') as route_label,
    from usage_lines
    inner join sessions
        on usage_lines.session_id = sessions.session_id
    where usage_lines.component = 'llm'
),

aggregated as (
    select
        tenant_id,
        business_date,
        iso_week,
        week_start_date,
        scenario,
        pipeline,
        is_replay,
        phase_label as phase,
        route_label as route,
        provider,
        model,
        count(distinct source || chr(31) || event_id) as llm_call_count,
        cast(coalesce(sum(quantity) filter (where meter = 'llm.input_tokens'), 0) as bigint)
            as input_tokens,
        cast(
            coalesce(sum(quantity) filter (where meter = 'llm.cached_input_tokens'), 0)
            as bigint
        ) as cached_input_tokens,
        cast(coalesce(sum(quantity) filter (where meter = 'llm.output_tokens'), 0) as bigint)
            as output_tokens,
        coalesce(sum(amount), {{ money(0) }}) as llm_cost,
        coalesce(sum(amount) filter (where meter = 'llm.input_tokens'), {{ money(0) }})
            as input_cost,
        coalesce(sum(amount) filter (where meter = 'llm.cached_input_tokens'), {{ money(0) }})
            as cached_input_cost,
        coalesce(sum(amount) filter (where meter = 'llm.output_tokens'), {{ money(0) }})
            as output_cost,
        coalesce(sum(savings_amount), {{ money(0) }}) as llm_cache_savings,
        count(distinct source || chr(31) || event_id) filter (where not is_priced)
            as unpriced_usage_event_count,
    from llm_lines
    group by all
),

final as (
    select
        tenant_id,
        business_date,
        iso_week,
        week_start_date,
        scenario,
        pipeline,
        is_replay,
        phase,
        route,
        provider,
        model,
        '{{ var("reporting_currency") }}' as currency,
        llm_call_count,
        input_tokens,
        cached_input_tokens,
        output_tokens,
        input_cost,
        cached_input_cost,
        output_cost,
        llm_cost,
        llm_cache_savings,
        unpriced_usage_event_count,
    from aggregated
)

select * from final
