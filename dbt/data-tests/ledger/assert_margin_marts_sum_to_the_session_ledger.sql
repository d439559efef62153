-- Reported to Dagster as a check on fct_tenant_daily_margin (the test reads several models).
{{ config(meta={"dagster": {"ref": {"name": "fct_tenant_daily_margin"}}}) }}
-- The daily and weekly marts re-aggregate the session ledger without losing or adding a cent.
with

session_ledger as (
    select * from {{ ref('fct_session_ledger') }} {{ refresh_filter('business_date', 'week') }}
),

daily as (
    select * from {{ ref('fct_tenant_daily_margin') }} {{ refresh_filter('business_date', 'week') }}
),

weekly as (
    select * from {{ ref('fct_tenant_weekly_margin') }}
        {{ refresh_filter('week_start_date', 'week') }}
),

ledger_totals as (
    select
        tenant_id,
        count(*) as session_count,
        sum(total_cost) as total_cost,
        sum(revenue) as revenue,
        sum(interruption_waste_cost) as interruption_waste_cost,
        sum(cache_savings) as cache_savings,
    from session_ledger
    group by tenant_id
),

{% for mart in ['daily', 'weekly'] %}
{{ mart }}_totals as (
    select
        tenant_id,
        sum(session_count) as session_count,
        sum(total_cost) as total_cost,
        sum(revenue) as revenue,
        sum(interruption_waste_cost) as interruption_waste_cost,
        sum(cache_savings) as cache_savings,
    from {{ mart }}
    group by tenant_id
),

{% endfor %}
final as (
    {% for mart in ['daily', 'weekly'] %}
    select
        '{{ mart }}' as mart,
        ledger_totals.tenant_id,
    from ledger_totals
    full outer join {{ mart }}_totals
        on ledger_totals.tenant_id = {{ mart }}_totals.tenant_id
    where ledger_totals.session_count is distinct from {{ mart }}_totals.session_count
        or ledger_totals.total_cost is distinct from {{ mart }}_totals.total_cost
        or ledger_totals.revenue is distinct from {{ mart }}_totals.revenue
        or ledger_totals.interruption_waste_cost
            is distinct from {{ mart }}_totals.interruption_waste_cost
        or ledger_totals.cache_savings is distinct from {{ mart }}_totals.cache_savings
    {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select * from final
