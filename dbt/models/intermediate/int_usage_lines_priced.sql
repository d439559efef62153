{{ config(materialized='incremental', unique_key='session_id') }}
{%- set reporting_currency = var('reporting_currency') -%}

with

usage_lines as (
    select * from {{ ref('int_usage_lines_unpivoted') }} {{ refresh_filter('session_id') }}
),

rate_card as (
    select * from {{ ref('stg_reference__rate_card') }}
),

fx_rates as (
    select * from {{ ref('stg_reference__fx_rates') }}
),

-- SPEC 4: the names a line carries resolved to the rate card's before the match, so that an
-- alias re-prices.
{{ rate_card_names('usage_lines', 'named_lines') }},

named as (
    select
        event_id,
        source,
        session_id,
        tenant_id,
        occurred_at,
        component,
        provider as seen_provider,
        model as seen_model,
        named_provider as provider,
        named_model as model,
        meter,
        quantity,
        billed_quantity,
        is_cache_hit,
        savings_reference_meter,
        turn_index,
        phase,
        route,
    from named_lines
),

-- SPEC 4: the rate row in effect at occurred_at, windows half-open [effective_from, effective_to).
-- The reference loader refuses overlapping windows, so at most one row matches.
with_rates as (
    select
        named.*,
        cast(named.occurred_at as date) as usage_date,
        own_rate.rate_card_line_number,
        own_rate.currency as rate_currency,
        own_rate.unit_price,
        savings_rate.currency as savings_rate_currency,
        savings_rate.unit_price as savings_reference_unit_price,
    from named
    left join rate_card as own_rate
        on named.provider = own_rate.provider
        and named.model = own_rate.model
        and named.meter = own_rate.meter
        and named.occurred_at >= own_rate.effective_from
        and (own_rate.effective_to is null or named.occurred_at < own_rate.effective_to)
    left join rate_card as savings_rate
        on named.provider = savings_rate.provider
        and named.model = savings_rate.model
        and named.savings_reference_meter = savings_rate.meter
        and named.occurred_at >= savings_rate.effective_from
        and (
            savings_rate.effective_to is null
            or named.occurred_at < savings_rate.effective_to
        )
),

-- SPEC 4: the FX rate of the latest date on or before the event's UTC date.
with_own_fx as (
    select
        with_rates.*,
        own_fx.fx_rate as own_fx_rate,
    from with_rates
    {{ asof_left_join('fx_rates', 'own_fx', 'with_rates.rate_currency = own_fx.currency',
        'with_rates.usage_date', 'rate_date', 'currency') }}
),

with_fx as (
    select
        with_own_fx.*,
        savings_fx.fx_rate as savings_fx_rate,
    from with_own_fx
    {{ asof_left_join('fx_rates', 'savings_fx',
        'with_own_fx.savings_rate_currency = savings_fx.currency',
        'with_own_fx.usage_date', 'rate_date', 'currency') }}
),

converted as (
    select
        *,
        case
            when rate_currency = '{{ reporting_currency }}' then cast(1 as decimal(38, 12))
            else own_fx_rate
        end as fx_rate,
        case
            when savings_rate_currency = '{{ reporting_currency }}'
                then cast(1 as decimal(38, 12))
            else savings_fx_rate
        end as savings_reference_fx_rate,
    from with_fx
),

unit_prices as (
    select
        *,
        {{ unit_price('unit_price * fx_rate') }} as unit_price_reporting,
        {{ unit_price('savings_reference_unit_price * savings_reference_fx_rate') }}
            as savings_reference_unit_price_reporting,
        case
            when quantity = 0 then null
            when unit_price is null then 'no_rate_in_effect'
            when fx_rate is null then 'no_fx_rate'
        end as meter_unpriced_reason,
    from converted
),

-- SPEC 5: one meter with quantity > 0 and no price makes the whole event unpriced.
event_status as (
    select
        *,
        coalesce(
            meter_unpriced_reason,
            case
                when count(meter_unpriced_reason) over (partition by source, event_id) > 0
                    then 'other_meter_unpriced'
            end
        ) as unpriced_reason,
    from unit_prices
),

final as (
    select
        event_id,
        source,
        session_id,
        tenant_id,
        occurred_at,
        usage_date,
        component,
        provider,
        model,
        seen_provider,
        seen_model,
        turn_index,
        phase,
        route,
        meter,
        quantity,
        is_cache_hit,
        billed_quantity,
        rate_card_line_number,
        rate_currency,
        unit_price,
        fx_rate,
        unit_price_reporting,
        '{{ reporting_currency }}' as currency,
        unpriced_reason is null as is_priced,
        unpriced_reason,
        case
            when unpriced_reason is null
                then {{ money('billed_quantity * coalesce(unit_price_reporting, 0)') }}
        end as amount,
        case when savings_reference_meter is not null then component end as savings_kind,
        case
            when savings_reference_meter is null or quantity = 0
                then {{ money(0) }}
            when unpriced_reason is not null or savings_reference_unit_price_reporting is null
                then null
            else {{ money(
                'quantity * (savings_reference_unit_price_reporting - case when is_cache_hit '
                ~ 'then 0 else unit_price_reporting end)') }}
        end as savings_amount,
    from event_status
)

select * from final
