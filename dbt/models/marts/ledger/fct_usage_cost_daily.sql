{{ config(materialized='incremental', unique_key='business_date') }}
{#-
    The priced usage lines summed per session grain (tenant, business date, scenario, pipeline,
    replay) and cost cell (component, provider, model, meter, cache hit): what the margin board's
    cost breakdown and the cost drivers (boards and weekly review) read, so that their cost grows
    with days, not with usage lines. Incremental like fct_cost_by_phase_route: the refreshed ISO
    weeks (by the session's business date) are recomputed from their sessions' lines.
-#}
with

{{ refreshed_weeks_sessions_and_usage_lines() }},

aggregated as (
    select
        sessions.tenant_id,
        sessions.business_date,
        sessions.iso_week,
        sessions.week_start_date,
        sessions.scenario,
        sessions.pipeline,
        sessions.is_replay,
        usage_lines.component,
        usage_lines.provider,
        usage_lines.model,
        usage_lines.meter,
        usage_lines.is_cache_hit,
        count(*) as line_count,
        count(*) filter (where usage_lines.is_priced) as priced_line_count,
        count(*) filter (where not usage_lines.is_priced) as unpriced_line_count,
        sum(usage_lines.billed_quantity) filter (where usage_lines.is_priced)
            as priced_billed_quantity,
        coalesce(sum(usage_lines.amount) filter (where usage_lines.is_priced), {{ money(0) }})
            as cost,
        coalesce(sum(usage_lines.savings_amount), {{ money(0) }}) as cache_savings,
        min(usage_lines.unit_price_reporting) filter (where usage_lines.is_priced)
            as min_unit_price_reporting,
        max(usage_lines.unit_price_reporting) filter (where usage_lines.is_priced)
            as max_unit_price_reporting
    from usage_lines
    inner join sessions
        on usage_lines.session_id = sessions.session_id
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
        component,
        provider,
        model,
        meter,
        is_cache_hit,
        '{{ var("reporting_currency") }}' as currency,
        line_count,
        priced_line_count,
        unpriced_line_count,
        priced_billed_quantity,
        cost,
        cache_savings,
        min_unit_price_reporting,
        max_unit_price_reporting
    from aggregated
)

select * from final
