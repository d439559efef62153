{{ config(materialized='incremental', unique_key='week_start_date') }}
with

session_ledger as (
    select * from {{ ref('fct_session_ledger') }} {{ refresh_filter('business_date', 'week') }}
),

aggregated as (
    select
        session_ledger.tenant_id,
        session_ledger.iso_week,
        session_ledger.week_start_date,
        session_ledger.is_replay,
        {{ margin_aggregates('session_ledger') }}
    from session_ledger
    group by
        session_ledger.tenant_id,
        session_ledger.iso_week,
        session_ledger.week_start_date,
        session_ledger.is_replay
),

final as (
    select
        tenant_id,
        iso_week,
        week_start_date,
        -- Replayed copies (SPEC 11) apart from recorded traffic, so readers can exclude them.
        is_replay,
        '{{ var("reporting_currency") }}' as currency,
        {{ margin_columns() }}
    from aggregated
)

select * from final
