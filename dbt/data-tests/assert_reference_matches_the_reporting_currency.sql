-- The reference tables were loaded for the reporting currency dbt converts to; otherwise every
-- FX rate would be for the wrong currency. Fix: run `ledger build` (it reloads the reference).
with

meta as (
    select * from {{ ref('stg_reference__meta') }}
),

final as (
    select
        reporting_currency,
        '{{ var("reporting_currency") }}' as dbt_reporting_currency,
    from meta
    where reporting_currency <> '{{ var("reporting_currency") }}'
)

select * from final
