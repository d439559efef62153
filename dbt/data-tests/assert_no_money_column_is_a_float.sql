-- Reported to Dagster as a check on fct_session_ledger (the test reads several models).
{{ config(meta={"dagster": {"ref": {"name": "fct_session_ledger"}}}) }}
-- depends_on: {{ ref('fct_experience_tenant_daily') }}
-- depends_on: {{ ref('fct_session_ledger') }}
-- depends_on: {{ ref('fct_tenant_daily_margin') }}
-- depends_on: {{ ref('fct_tenant_weekly_margin') }}
-- depends_on: {{ ref('fct_cost_by_phase_route') }}
-- SPEC 5: money is exact, from rate card to report. Anywhere in the warehouse, a column named
-- like money (a cost, revenue, savings, margin, amount, price, fee or FX rate word) must be a
-- DECIMAL,
-- and money amounts must keep at least 12 decimal places (percentages excepted).
with

columns as (
    select
        table_schema,
        table_name,
        column_name,
        data_type,
        numeric_scale,
    from ({{ warehouse_columns() }}) as warehouse_columns
    where true
        -- the contract's own inputs (cost.reported `amount`, 6 places by the contract) are
        -- widened to decimal(38, 12) by the first model that treats them as money
        and not (table_schema = 'raw' and table_name = 'events')
        and not (table_schema = 'staging' and table_name = 'stg_metering__events')
        -- (and their copy for an incremental refresh, ledger.pipeline.plan)
        and not (table_schema = 'ops' and table_name = 'refresh_events')
),

money_columns as (
    select *
    from columns
    where (
        regexp_matches(
            column_name, '(^|_)(cost|revenue|savings|margin|amount|price|fee|fx_rate)(_|$)'
        )
        -- counts, keys, flags and labels that merely mention money
        and not regexp_matches(
            column_name, '(_count|_number|_status|_reason|_kind|_meter|_id|_source)$'
        )
        and not regexp_matches(column_name, '^(is|has)_')
    )
    or (table_schema = 'reference' and column_name = 'rate')
),

final as (
    select
        table_schema,
        table_name,
        column_name,
        data_type,
    from money_columns
    where not starts_with(upper(data_type), 'DECIMAL')
        or (not ends_with(column_name, '_pct') and numeric_scale < 12)
)

select * from final
