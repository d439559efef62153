{{ config(materialized='incremental', unique_key='session_id', partition_week_of='business_date') }}
{%- set components = var('components') -%}
{%- set savings_kinds = var('savings_kinds') -%}
{%- set cost_columns = [] -%}
{%- for component in components -%}
    {%- do cost_columns.append(component ~ '_cost') -%}
{%- endfor -%}
{%- set savings_columns = [] -%}
{%- for kind in savings_kinds -%}
    {%- do savings_columns.append(kind ~ '_cache_savings') -%}
{%- endfor -%}

with

sessions as (
    select * from {{ ref('int_sessions_resolved') }} {{ refresh_filter('session_id') }}
),

billing as (
    select * from {{ ref('int_sessions_billed') }} {{ refresh_filter('session_id') }}
),

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('session_id') }}
),

interruption_waste as (
    select * from {{ ref('int_interruption_waste_priced') }} {{ refresh_filter('session_id') }}
),

degradations as (
    select * from {{ ref('stg_metering__session_degradations') }}
),

component_costs as (
    select * from {{ ref('int_session_component_costs') }} {{ refresh_filter('session_id') }}
),

-- Component costs and unpriced usage come from int_session_component_costs (SPEC 9's rule over
-- SPEC 5's priced lines and the reported costs).
session_usage as (
    select
        session_id,
        {%- for kind in savings_kinds %}
        coalesce(sum(savings_amount) filter (where savings_kind = '{{ kind }}'), {{ money(0) }})
            as {{ kind }}_cache_savings,
        {%- endfor %}
    from usage_lines
    group by session_id
),

session_interruptions as (
    select
        session_id,
        count(*) as interruption_count,
        count(*) filter (where is_false_interruption) as false_interruption_count,
        coalesce(sum(waste_amount), {{ money(0) }}) as interruption_waste_cost,
        count(*) filter (where not is_priced) as unpriced_interruption_count,
    from interruption_waste
    group by session_id
),

session_degradations as (
    select
        session_id,
        count(*) as degradation_count,
    from degradations
    group by session_id
),

joined as (
    select
        sessions.*,
        billing.revenue_status,
        billing.price_plan_line_number,
        billing.billable_seconds,
        billing.billable_minutes,
        billing.revenue,
        {%- for component in components %}
        coalesce(component_costs.{{ component }}_cost, {{ money(0) }}) as {{ component }}_cost,
        component_costs.{{ component }}_cost_source,
        {%- endfor %}
        {%- for kind in savings_kinds %}
        coalesce(session_usage.{{ kind }}_cache_savings, {{ money(0) }})
            as {{ kind }}_cache_savings,
        {%- endfor %}
        coalesce(component_costs.unpriced_usage_event_count, 0) as unpriced_usage_event_count,
        coalesce(session_interruptions.interruption_count, 0) as interruption_count,
        coalesce(session_interruptions.false_interruption_count, 0)
            as false_interruption_count,
        coalesce(session_interruptions.interruption_waste_cost, {{ money(0) }})
            as interruption_waste_cost,
        coalesce(session_interruptions.unpriced_interruption_count, 0)
            as unpriced_interruption_count,
        coalesce(session_degradations.degradation_count, 0) as degradation_count,
    from sessions
    inner join billing
        on sessions.session_id = billing.session_id
    left join session_usage
        on sessions.session_id = session_usage.session_id
    left join component_costs
        on sessions.session_id = component_costs.session_id
    left join session_interruptions
        on sessions.session_id = session_interruptions.session_id
    left join session_degradations
        on sessions.session_id = session_degradations.session_id
),

totals as (
    select
        *,
        {{ money(cost_columns | join(' + ')) }} as total_cost,
        {{ money(savings_columns | join(' + ')) }}
            as cache_savings,
    from joined
),

final as (
    select
        session_id,
        tenant_id,
        scenario,
        pipeline,
        channel,
        started_at,
        ended_at,
        end_reason,
        is_open,
        has_start,
        is_replay,
        business_date,
        iso_week,
        week_start_date,
        duration_seconds,
        billable_seconds,
        billable_minutes,
        '{{ var("reporting_currency") }}' as currency,
        {%- for component in components %}
        {{ component }}_cost,
        {%- endfor %}
        total_cost,
        {%- for component in components %}
        {{ component }}_cost_source,
        {%- endfor %}
        revenue_status,
        price_plan_line_number,
        revenue,
        {{ money('revenue - total_cost') }} as gross_margin,
        {{ percentage('revenue - total_cost', 'revenue') }} as gross_margin_pct,
        turn_count,
        interruption_count,
        false_interruption_count,
        interruption_waste_cost,
        cache_savings,
        {%- for kind in savings_kinds %}
        {{ kind }}_cache_savings,
        {%- endfor %}
        degradation_count,
        unpriced_usage_event_count,
        unpriced_interruption_count,
        unpriced_usage_event_count + unpriced_interruption_count > 0 as has_unpriced_usage,
        event_count,
        last_event_at,
    from totals
)

select * from final
