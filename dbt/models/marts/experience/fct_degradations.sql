{{ config(materialized='incremental', unique_key='session_id') }}
-- One row per session.degraded event (SPEC 6), for degradation counts by kind and the explorer.
with

degradations as (
    select * from {{ ref('stg_metering__session_degradations') }}
),

final as (
    select * from degradations
)

select * from final
