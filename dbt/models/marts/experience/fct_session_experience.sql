{{ config(materialized='incremental', unique_key='session_id') }}
-- One row per session with the counts behind every experience rate (SPEC 6): numerators and
-- denominators, so any filter combination divides sums, never averages rates.
with

session_experience as (
    select * from {{ ref('int_session_experience_aggregated') }} {{ refresh_filter('session_id') }}
),

final as (
    select * from session_experience
)

select * from final
