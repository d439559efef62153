{{ config(materialized='incremental', unique_key='session_id', refresh_also="reported_via = 'import'") }}
{#-
    What providers and platforms say usage cost (SPEC 9, 10): `cost.reported` events (per session)
    and the rows of imported provider invoices or usage exports (per UTC day), one row each, the
    amount widened to DECIMAL(38, 12) and converted to the reporting currency at the FX rate of
    the latest date on or before the UTC date (SPEC 4), exactly like priced usage.

    The reconciliation day is the UTC date: providers bill by UTC day, and priced usage lines carry
    the same `usage_date`.
-#}
{%- set reporting_currency = var('reporting_currency') -%}

with

-- Only the latest revision of a reported cost line counts (SPEC 9): staging keeps those alone.
reported_costs as (
    select * from {{ ref('stg_metering__reported_costs') }}
),

imported as (
    {{ imported_provider_costs() }}
),

fx_rates as (
    select * from {{ ref('stg_reference__fx_rates') }}
),

reported_events as (
    select
        'event' as reported_via,
        source || ':' || event_id as reported_id,
        tenant_id,
        session_id,
        occurred_at,
        cast(occurred_at as date) as usage_date,
        provider,
        component,
        model,
        turn_index,
        item,
        amount as reported_amount,
        currency as reported_currency,
    from reported_costs
),

reported_imports as (
    select
        'import' as reported_via,
        file_name || ':' || cast(line_number as varchar) as reported_id,
        cast(null as varchar) as tenant_id,
        cast(null as varchar) as session_id,
        cast(null as timestamp) as occurred_at,
        usage_date,
        provider,
        component,
        model,
        cast(null as bigint) as turn_index,
        item,
        {{ money('amount') }} as reported_amount,
        currency as reported_currency,
    from imported
),

reported as (
    select * from reported_events
    union all
    select * from reported_imports
),

-- Named like the priced usage they are compared with (SPEC 9, 10), so that a bill meets its
-- usage's provider and model however it spells them.
{{ rate_card_names('reported', 'named') }},

with_fx as (
    select
        named.*,
        fx.fx_rate as listed_fx_rate,
    from named
    {{ asof_left_join('fx_rates', 'fx', 'named.reported_currency = fx.currency',
        'named.usage_date', 'rate_date', 'currency') }}
),

final as (
    select
        reported_via,
        reported_id,
        tenant_id,
        session_id,
        occurred_at,
        usage_date,
        named_provider as provider,
        component,
        named_model as model,
        provider as seen_provider,
        model as seen_model,
        turn_index,
        item,
        reported_amount,
        reported_currency,
        case
            when reported_currency = '{{ reporting_currency }}' then {{ money(1) }}
            else listed_fx_rate
        end as fx_rate,
        {{ money(
            'reported_amount * case when reported_currency = \'' ~ reporting_currency
            ~ '\' then 1 else listed_fx_rate end') }} as amount,
        '{{ reporting_currency }}' as currency,
    from with_fx
)

select * from final
