{{ config(materialized='incremental', unique_key='session_id') }}
{#-
    The sidecar of the FOCUS export (SPEC 10): usage the rate card could not price is never a
    zero-cost charge. One row per business date x tenant x session x component x provider x
    model x meter, with the quantity and why it is unpriced.
-#}

with

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('session_id') }}
),

sessions as (
    select * from {{ ref('int_sessions_resolved') }} {{ refresh_filter('session_id') }}
),

-- Unpriced lines of a group whose reported cost stands in for them are charged (SPEC 9).
cost_groups as (
    select * from {{ ref('int_cost_groups_resolved') }} {{ refresh_filter('session_id') }}
),

final as (
    select
        sessions.business_date,
        usage_lines.tenant_id,
        usage_lines.session_id,
        usage_lines.component,
        usage_lines.provider,
        usage_lines.model,
        usage_lines.meter,
        sum(usage_lines.quantity) as quantity,
        count(*) as usage_events,
        {{ ordered_string_agg(
            'usage_lines.unpriced_reason', "', '", 'usage_lines.unpriced_reason', distinct=true
        ) }}
            as unpriced_reasons,
        min(usage_lines.occurred_at) as first_occurred_at,
        max(usage_lines.occurred_at) as last_occurred_at,
    from usage_lines
    inner join sessions
        on usage_lines.session_id = sessions.session_id
    left join cost_groups
        on usage_lines.session_id = cost_groups.session_id
        and usage_lines.component = cost_groups.component
        and usage_lines.provider = cost_groups.provider
    where not usage_lines.is_priced
        and usage_lines.quantity > 0
        and coalesce(cost_groups.cost_source, 'unpriced') <> 'reported'
    group by all
)

select * from final
