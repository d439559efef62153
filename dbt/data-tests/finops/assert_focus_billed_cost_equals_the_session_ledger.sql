-- SPEC 10: the FOCUS export's BilledCost adds up exactly to the ledger's total cost per tenant
-- and business date (no rounding anywhere on the way).
with

focus as (
    select
        x_tenant_id as tenant_id,
        x_business_date as business_date,
        sum("BilledCost") as billed_cost,
    from {{ ref('fct_focus_charges') }}
    {{ refresh_filter('x_business_date', 'week') }}
    group by all
),

ledger as (
    select
        tenant_id,
        business_date,
        sum(total_cost) as total_cost,
    from {{ ref('fct_session_ledger') }}
    {{ refresh_filter('business_date', 'week') }}
    group by all
),

final as (
    select
        coalesce(focus.tenant_id, ledger.tenant_id) as tenant_id,
        coalesce(focus.business_date, ledger.business_date) as business_date,
        focus.billed_cost,
        ledger.total_cost,
    from focus
    full outer join ledger
        on focus.tenant_id = ledger.tenant_id
        and focus.business_date = ledger.business_date
    where coalesce(focus.billed_cost, 0) <> coalesce(ledger.total_cost, 0)
)

select * from final
