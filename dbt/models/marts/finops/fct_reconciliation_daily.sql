{{ config(materialized='incremental', unique_key='usage_date') }}
{#-
    Reconciliation (SPEC 10): per UTC day x provider x component where both priced usage and
    reported cost (cost.reported events, imported provider bills) exist, what the ledger priced
    against what the provider says it cost, both in the reporting currency.

    difference = reported - priced; difference_pct = 100 x difference / priced. The difference is
    over the tolerance when |difference_pct| is above `reconciliation_tolerance_pct` (default 2)
    and |difference| is at least `reconciliation_min_difference` (default 1 unit of the reporting
    currency): that is "rate card drift" (alerted by ledger.finops.drift).

    top_model names the model whose own difference is largest (reported rows that name a model),
    so an alert can say which price went stale.
-#}
{%- set tolerance_pct = var('reconciliation_tolerance_pct') -%}
{%- set min_difference = var('reconciliation_min_difference') -%}

with

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('usage_date', 'week') }}
),

reported_costs as (
    select * from {{ ref('int_billed_costs_converted') }} {{ refresh_filter('usage_date', 'week') }}
),

priced_by_model as (
    select
        usage_date,
        provider,
        component,
        model,
        sum(amount) as priced_cost,
        count(distinct source || chr(31) || event_id) as priced_events,
    from usage_lines
    where is_priced
    group by all
),

reported_by_model as (
    select
        usage_date,
        provider,
        component,
        model,
        sum(amount) as reported_cost,
        count(*) as reported_rows,
        count(*) filter (where amount is null) as unconverted_rows,
    from reported_costs
    group by all
),

priced as (
    select
        usage_date,
        provider,
        component,
        sum(priced_cost) as priced_cost,
        -- BIGINT on both engines (DuckDB sums a BIGINT to a HUGEINT, Spark to a BIGINT): one
        -- contract type.
        cast(sum(priced_events) as bigint) as priced_events,
    from priced_by_model
    group by all
),

reported as (
    select
        usage_date,
        provider,
        component,
        sum(reported_cost) as reported_cost,
        cast(sum(reported_rows) as bigint) as reported_rows,
        cast(sum(unconverted_rows) as bigint) as unconverted_rows,
    from reported_by_model
    group by all
),

model_differences as (
    select
        reported_by_model.usage_date,
        reported_by_model.provider,
        reported_by_model.component,
        reported_by_model.model,
        {{ money('reported_by_model.reported_cost - coalesce(priced_by_model.priced_cost, 0)') }}
            as model_difference,
    from reported_by_model
    left join priced_by_model
        on reported_by_model.usage_date = priced_by_model.usage_date
        and reported_by_model.provider = priced_by_model.provider
        and reported_by_model.component = priced_by_model.component
        and reported_by_model.model = priced_by_model.model
    where reported_by_model.model is not null
),

top_models as (
    select
        usage_date,
        provider,
        component,
        arg_max(model, abs(model_difference)) as top_model,
        arg_max(model_difference, abs(model_difference)) as top_model_difference,
    from model_differences
    group by all
),

compared as (
    select
        priced.usage_date,
        priced.provider,
        priced.component,
        priced.priced_cost,
        reported.reported_cost,
        {{ money('reported.reported_cost - priced.priced_cost') }} as difference,
        priced.priced_events,
        reported.reported_rows,
        reported.unconverted_rows,
        top_models.top_model,
        top_models.top_model_difference,
    from priced
    inner join reported
        on priced.usage_date = reported.usage_date
        and priced.provider = reported.provider
        and priced.component = reported.component
    left join top_models
        on priced.usage_date = top_models.usage_date
        and priced.provider = top_models.provider
        and priced.component = top_models.component
),

final as (
    select
        usage_date,
        provider,
        component,
        '{{ var("reporting_currency") }}' as currency,
        priced_cost,
        reported_cost,
        difference,
        {{ percentage('difference', 'priced_cost') }} as difference_pct,
        -- Nothing priced but something billed: any difference of the minimum size is drift.
        abs(difference) >= {{ min_difference }}
        and (
            priced_cost = 0
            or abs({{ percentage('difference', 'priced_cost') }}) > {{ tolerance_pct }}
        ) as is_over_tolerance,
        top_model,
        top_model_difference,
        priced_events,
        reported_rows,
        unconverted_rows,
    from compared
)

select * from final
