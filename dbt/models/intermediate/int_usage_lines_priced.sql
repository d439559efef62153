{{ config(materialized='incremental', unique_key='session_id') }}
{%- set reporting_currency = var('reporting_currency') -%}
{%- set tts_token_meters = "('" ~ var('tts_token_meters') | join("', '") ~ "')" -%}
{#- A meter that is not the one its event is billed by (with_billed_meters) bills nothing. -#}
{%- set billed_quantity =
    'case when is_billed_meter then billed_quantity else cast(0 as decimal(38, 6)) end' -%}

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

-- SPEC 4: a `tts.usage` is billed by its token meters where the rate card prices its model per
-- token (a rate in effect for a token count the event carries), else by its characters: never
-- both. The meters not billed stay lines, so that their quantities still count, billing nothing.
with_billed_meters as (
    select
        *,
        case
            when component != 'tts' then true
            when max(
                case
                    when
                        meter in {{ tts_token_meters }}
                        and rate_card_line_number is not null
                        and quantity > 0
                        then 1
                    else 0
                end
            ) over (partition by source, event_id) = 1
                then meter in {{ tts_token_meters }}
            else meter not in {{ tts_token_meters }}
        end as is_billed_meter,
    from with_rates
),

-- SPEC 4: the FX rate of the latest date on or before the event's UTC date.
with_own_fx as (
    select
        with_billed_meters.*,
        own_fx.fx_rate as own_fx_rate,
    from with_billed_meters
    {{ asof_left_join('fx_rates', 'own_fx',
        'with_billed_meters.rate_currency = own_fx.currency',
        'with_billed_meters.usage_date', 'rate_date', 'currency') }}
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
            when quantity = 0 or not is_billed_meter then null
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
        {{ billed_quantity }} as billed_quantity,
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
                then {{ money(billed_quantity ~ ' * coalesce(unit_price_reporting, 0)') }}
        end as amount,
        case when savings_reference_meter is not null then component end as savings_kind,
        case
            when savings_reference_meter is null or quantity = 0 or not is_billed_meter
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
