{{ config(materialized='incremental', unique_key='x_session_id') }}
{#-
    The ledger's cost as a FOCUS 1.0 dataset (SPEC 10): one charge row per business date x tenant
    x session x component x provider x model, summing the same priced line amounts as
    fct_session_ledger, so BilledCost adds up exactly to the ledger's total cost per tenant and
    day. Column names are FOCUS's own (PascalCase; the ledger's own columns as `x_` custom
    columns) so that `ledger export focus` only copies and formats. Unpriced lines are not charges: fct_focus_unpriced_usage lists them with quantities.

    The ledger has no discounts or commitments yet: BilledCost = EffectiveCost = ListCost =
    ContractedCost. A row mixes the meters of its model (input, cached and output tokens at
    different prices), so its quantities are in the component's unit and no single unit price
    exists: the unit price columns are NULL.
-#}
{%- set units = {
    'asr': "'Seconds'", 'llm': "'Tokens'", 'tts': "'Characters'", 'realtime': "'Tokens'",
    'vision': "'Images'",
} -%}
{%- set networking_resources = ['pstn', 'sip', 'sfu', 'turn'] -%}

with

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('session_id') }}
),

sessions as (
    select * from {{ ref('int_sessions_resolved') }} {{ refresh_filter('session_id') }}
),

-- SPEC 9: a session x component x provider group whose cost is the provider's reported amount is
-- charged at that amount (one row, model `reported`), not at its usage lines.
cost_groups as (
    select * from {{ ref('int_cost_groups_resolved') }} {{ refresh_filter('session_id') }}
),

usage_charges as (
    select
        sessions.business_date,
        usage_lines.tenant_id,
        usage_lines.session_id,
        sessions.scenario,
        sessions.pipeline,
        usage_lines.component,
        usage_lines.provider,
        usage_lines.model,
        case usage_lines.component
            {%- for component, unit in units.items() %}
            when '{{ component }}' then {{ unit }}
            {%- endfor %}
            else case when usage_lines.meter = 'infra.gb' then 'GB' else 'Minutes' end
        end as unit,
        sum(usage_lines.amount) as cost,
        sum(usage_lines.quantity) as consumed_quantity,
        sum(usage_lines.billed_quantity) as pricing_quantity,
        count(distinct usage_lines.source || chr(31) || usage_lines.event_id) as usage_events,
        false as is_reported,
    from usage_lines
    inner join sessions
        on usage_lines.session_id = sessions.session_id
    left join cost_groups
        on usage_lines.session_id = cost_groups.session_id
        and usage_lines.component = cost_groups.component
        and usage_lines.provider = cost_groups.provider
    where usage_lines.is_priced
        and coalesce(cost_groups.cost_source, 'usage') <> 'reported'
    group by all
),

reported_charges as (
    select
        sessions.business_date,
        sessions.tenant_id,
        cost_groups.session_id,
        sessions.scenario,
        sessions.pipeline,
        cost_groups.component,
        cost_groups.provider,
        'reported' as model,
        case cost_groups.component
            {%- for component, unit in units.items() %}
            when '{{ component }}' then {{ unit }}
            {%- endfor %}
            else 'Minutes'
        end as unit,
        cost_groups.cost,
        cast(null as decimal(38, 12)) as consumed_quantity,
        cast(null as decimal(38, 12)) as pricing_quantity,
        cast(0 as bigint) as usage_events,
        true as is_reported,
    from cost_groups
    inner join sessions
        on cost_groups.session_id = sessions.session_id
    where cost_groups.cost_source = 'reported'
),

charges as (
    select * from usage_charges
    {{ union_all_by_name() }}
    select * from reported_charges
),

final as (
    select
        -- Custom columns carry FOCUS's `x_` prefix (they locate the charge in the ledger).
        business_date as x_business_date,
        tenant_id as x_tenant_id,
        session_id as x_session_id,
        component as x_component,
        provider as x_provider,
        model as x_model,
        usage_events as x_usage_events,
        cost as "BilledCost",
        cost as "EffectiveCost",
        cost as "ListCost",
        cost as "ContractedCost",
        '{{ var("reporting_currency") }}' as "BillingCurrency",
        'voice-ledger' as "BillingAccountId",
        'voice ledger' as "BillingAccountName",
        tenant_id as "SubAccountId",
        tenant_id as "SubAccountName",
        {{ business_day_start_utc("date_trunc('month', business_date)") }}
            as "BillingPeriodStart",
        {{ business_day_start_utc("date_trunc('month', business_date) + interval 1 month") }}
            as "BillingPeriodEnd",
        {{ business_day_start_utc('business_date') }} as "ChargePeriodStart",
        {{ business_day_start_utc('business_date + 1') }} as "ChargePeriodEnd",
        'Usage' as "ChargeCategory",
        -- FOCUS 1.0-preview's name of ChargeCategory: focus-validator 1.0.0's SkuPriceId rule
        -- still reads it, so it is carried too (same value).
        'Usage' as "ChargeType",
        cast(null as varchar) as "ChargeClass",
        'Usage-Based' as "ChargeFrequency",
        case
            when is_reported then component || ' cost of ' || provider
                || ' as the provider reported it (its usage is not fully priced by the rate card)'
            else component || ' usage of ' || provider || '/' || model
                || ' at rate-card list prices (no discounts or commitments applied yet)'
        end as "ChargeDescription",
        'Standard' as "PricingCategory",
        consumed_quantity as "ConsumedQuantity",
        unit as "ConsumedUnit",
        pricing_quantity as "PricingQuantity",
        unit as "PricingUnit",
        cast(null as decimal(38, 12)) as "ListUnitPrice",
        cast(null as decimal(38, 12)) as "ContractedUnitPrice",
        -- Provider, Publisher, InvoiceIssuer and ResourceID are spelt as focus-validator 1.0.0
        -- requires them; the 1.0 specification's *Name forms are carried as well (ResourceId
        -- differs from ResourceID only in case, which SQL and most readers do not tell apart).
        provider as "Provider",
        provider as "Publisher",
        provider as "InvoiceIssuer",
        provider as "ProviderName",
        provider as "PublisherName",
        provider as "InvoiceIssuerName",
        case
            when component <> 'infra' then 'AI and Machine Learning'
            -- sqlfluff measures the next line with its templated list as 171 characters.
            -- noqa: disable=LT05
            when model in ('{{ networking_resources | join("', '") }}') then 'Networking'
            -- noqa: enable=LT05
            else 'Compute'
        end as "ServiceCategory",
        provider || ' ' || component as "ServiceName",
        model as "ResourceID",
        model as "ResourceName",
        component as "ResourceType",
        provider || '/' || model as "SkuId",
        -- One price point: the rate card's list prices for this provider and model.
        provider || '/' || model || ':list' as "SkuPriceId",
        cast(null as varchar) as "RegionId",
        cast(null as varchar) as "RegionName",
        cast(null as varchar) as "AvailabilityZone",
        cast(null as varchar) as "CommitmentDiscountId",
        cast(null as varchar) as "CommitmentDiscountName",
        cast(null as varchar) as "CommitmentDiscountCategory",
        cast(null as varchar) as "CommitmentDiscountType",
        cast(null as varchar) as "CommitmentDiscountStatus",
        {{ json_object_text(['tenant_id', 'session_id', 'scenario', 'pipeline']) }} as "Tags",
    from charges
)

select * from final
