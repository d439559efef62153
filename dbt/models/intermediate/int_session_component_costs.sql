{{ config(materialized='incremental', unique_key='session_id') }}
{%- set components = var('components') -%}

with

cost_groups as (
    select * from {{ ref('int_cost_groups_resolved') }} {{ refresh_filter('session_id') }}
),

-- One row per session: each component's cost and which SPEC 9 rule gave it ('usage', 'reported',
-- 'mixed' when its providers differ, 'unpriced' when any of them is; NULL when it has none).
final as (
    select
        session_id,
        {%- for component in components %}
        sum(cost) filter (where component = '{{ component }}') as {{ component }}_cost,
        case
            when count(*) filter (where component = '{{ component }}') = 0 then null
            when bool_or(cost_source = 'unpriced') filter (where component = '{{ component }}')
                then 'unpriced'
            when min(cost_source) filter (where component = '{{ component }}')
                = max(cost_source) filter (where component = '{{ component }}')
                then min(cost_source) filter (where component = '{{ component }}')
            else 'mixed'
        end as {{ component }}_cost_source,
        {%- endfor %}
        cast(sum(unpriced_usage_event_count) as bigint) as unpriced_usage_event_count,
    from cost_groups
    group by session_id
)

select * from final
