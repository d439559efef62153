{{ config(materialized='incremental', unique_key='session_id', partition_week_of='occurred_at') }}
-- One row per usage event and meter, priced (or not, with the reason): the session explorer,
-- cost breakdowns, LLM phase routing and the unpriced-usage table read it.
with

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('session_id') }}
),

final as (
    select * from usage_lines
)

select * from final
