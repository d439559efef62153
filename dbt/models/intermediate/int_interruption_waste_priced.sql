{{ config(materialized='incremental', unique_key='session_id') }}
with

interruptions as (
    select * from {{ ref('stg_metering__turn_interruptions') }}
),

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('session_id') }}
),

-- SPEC 5: the rule lives in the macro, shared with the shadow comparison (SPEC 11).
{{ interruption_waste_ctes('interruptions', 'usage_lines') }},

final as (
    select * from waste_priced
)

select * from final
