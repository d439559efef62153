{{ config(materialized='incremental', unique_key='business_date') }}
with

session_ledger as (
    select * from {{ ref('fct_session_ledger') }} {{ refresh_filter('business_date', 'week') }}
),

aggregated as (
    select
        session_ledger.tenant_id,
        session_ledger.business_date,
        session_ledger.is_replay,
        {{ margin_aggregates('session_ledger') }}
    from session_ledger
    group by session_ledger.tenant_id, session_ledger.business_date, session_ledger.is_replay
),

final as (
    select
        tenant_id,
        business_date,
        {{ iso_week_label('business_date') }} as iso_week,
        {{ iso_week_start('business_date') }} as week_start_date,
        -- Replayed copies (SPEC 11) apart from recorded traffic, so readers can exclude them.
        is_replay,
        '{{ var("reporting_currency") }}' as currency,
        {{ margin_columns() }}
    from aggregated
)

select * from final
