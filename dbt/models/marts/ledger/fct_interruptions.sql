{{ config(materialized='incremental', unique_key='session_id') }}
-- One row per turn interruption with its priced waste (SPEC 5), for the session explorer and the
-- unpriced-interruption table.
with

interruptions as (
    select * from {{ ref('int_interruption_waste_priced') }} {{ refresh_filter('session_id') }}
),

final as (
    select * from interruptions
)

select * from final
