-- SPEC 13: what each tenant spent per business date, in the reporting currency: the whole ledger
-- cost (provider NULL, fct_tenant_daily_margin's total_cost) and each provider's priced usage
-- (fct_usage_lines by the session's business date). Replayed copies are load tests, not spend.
with

tenant_days as (
    select * from {{ ref('fct_tenant_daily_margin') }}
    where not is_replay
),

usage_lines as (
    select * from {{ ref('fct_usage_lines') }}
    where is_priced
),

sessions as (
    select * from {{ ref('fct_session_ledger') }}
    where not is_replay
),

provider_days as (
    select
        sessions.tenant_id,
        usage_lines.provider,
        sessions.business_date,
        sum(usage_lines.amount) as cost,
    from usage_lines
    inner join sessions
        on usage_lines.session_id = sessions.session_id
    group by sessions.tenant_id, usage_lines.provider, sessions.business_date
),

final as (
    select
        tenant_id,
        cast(null as varchar) as provider,
        business_date,
        cast(total_cost as decimal(38, 12)) as cost,
        currency,
    from tenant_days

    union all

    select
        tenant_id,
        provider,
        business_date,
        cast(cost as decimal(38, 12)) as cost,
        '{{ var("reporting_currency") }}' as currency,
    from provider_days
)

select * from final
