{{ config(materialized='incremental', unique_key='session_id') }}
{#-
    SPEC 9: reported costs held for want of an FX rate on or before their UTC date, one row per
    report, named by its event and the landing file and line it came from (the data-quality
    page). A held report adds nothing to any total and never stops a build; where it stood for
    its group's cost, the session has unpriced usage. Once fx_rates.csv covers its date, the build
    converts it (an FX edit restates the dates it covers) and it leaves this list.
-#}

with

reported_costs as (
    select * from {{ ref('int_reported_costs_converted') }} {{ refresh_filter('session_id') }}
),

ingested_files as (
    select * from {{ source('raw', 'ingested_files') }}
),

final as (
    select
        reported_costs.tenant_id,
        reported_costs.session_id,
        reported_costs.source,
        reported_costs.event_id,
        ingested_files.path as file,
        reported_costs.line_number as line,
        reported_costs.occurred_at,
        reported_costs.reported_date,
        reported_costs.component,
        reported_costs.provider,
        reported_costs.model,
        reported_costs.item,
        reported_costs.reported_amount,
        reported_costs.reported_currency,
        'no_fx_rate' as held_reason,
    from reported_costs
    left join ingested_files
        on reported_costs.file_id = ingested_files.file_id
    where reported_costs.amount is null
)

select * from final
