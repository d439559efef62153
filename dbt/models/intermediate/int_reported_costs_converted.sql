{{ config(materialized='incremental', unique_key='session_id') }}
{%- set reporting_currency = var('reporting_currency') -%}

with

reported_costs as (
    select * from {{ ref('stg_metering__reported_costs') }}
),

fx_rates as (
    select * from {{ ref('stg_reference__fx_rates') }}
),

-- SPEC 9: a report is named like usage (aliases, case, hosts), so that it meets its usage's group
-- however the platform spells the provider (`Deepgram`, Vapi's `11labs`).
{{ rate_card_names('reported_costs', 'named_costs') }},

-- SPEC 4 and 9: converted like any amount, at the latest rate on or before the event's UTC date.
with_fx as (
    select
        named_costs.*,
        cast(named_costs.occurred_at as date) as reported_date,
        case
            when named_costs.currency = '{{ reporting_currency }}'
                then cast(1 as decimal(38, 12))
            else fx.fx_rate
        end as fx_rate,
    from named_costs
    {{ asof_left_join('fx_rates', 'fx', 'named_costs.currency = fx.currency',
        'cast(named_costs.occurred_at as date)', 'rate_date', 'currency') }}
),

final as (
    select
        event_id,
        source,
        tenant_id,
        session_id,
        occurred_at,
        reported_date,
        named_provider as provider,
        component,
        named_model as model,
        provider as seen_provider,
        model as seen_model,
        turn_index,
        item,
        amount as reported_amount,
        currency as reported_currency,
        fx_rate,
        '{{ reporting_currency }}' as currency,
        -- NULL, never 0, when the currency has no FX rate on or before that date: the report is
        -- held (SPEC 9), shown by its file and line (fct_reported_costs_held).
        {{ money('amount * fx_rate') }} as amount,
        file_id,
        line_number,
    from with_fx
)

select * from final
