-- Reported to Dagster as a check on fct_tenant_daily_board (the test reads several models).
{{ config(meta={"dagster": {"ref": {"name": "fct_tenant_daily_board"}}}) }}
-- The boards hold the ledger's money, not a copy that can drift: per tenant and period, every
-- money column of the daily and weekly boards equals the sum of fct_session_ledger's sessions of
-- that period, and every period with sessions has a board row. Returns the differing cells.
{%- set money_columns = [
    'revenue', 'asr_cost', 'llm_cost', 'tts_cost', 'realtime_cost', 'vision_cost', 'infra_cost',
    'total_cost', 'interruption_waste_cost', 'cache_savings', 'llm_cache_savings',
    'realtime_cache_savings', 'tts_cache_savings', 'vision_cache_savings',
] %}
{%- set periods = {
    'fct_tenant_daily_board': 'business_date',
    'fct_tenant_weekly_board': 'iso_week',
} %}

with

session_ledger as (
    select * from {{ ref('fct_session_ledger') }} {{ refresh_filter('business_date', 'week') }}
),

daily_board as (
    select * from {{ ref('fct_tenant_daily_board') }} {{ refresh_filter('business_date', 'week') }}
),

weekly_board as (
    select * from {{ ref('fct_tenant_weekly_board') }} {{ refresh_filter('week_start_date', 'week') }}
),

{%- for board, period in periods.items() %}

{{ board }}_expected as (
    select
        tenant_id,
        cast({{ period }} as varchar) as period,
        {%- for column in money_columns %}
        sum({{ column }}) as {{ column }},
        {%- endfor %}
        sum(revenue) - sum(total_cost) as gross_margin,
    from session_ledger
    group by all
),

{{ board }}_differences as (
    {%- for column in money_columns + ['gross_margin'] %}
    select
        '{{ board }}' as board,
        coalesce(expected.tenant_id, actual.tenant_id) as tenant_id,
        coalesce(expected.period, cast(actual.{{ period }} as varchar)) as period,
        '{{ column }}' as column_name,
        expected.{{ column }} as ledger_value,
        actual.{{ column }} as board_value,
    from {{ board }}_expected as expected
    full outer join {{ 'daily_board' if period == 'business_date' else 'weekly_board' }} as actual
        on expected.tenant_id = actual.tenant_id
        and expected.period = cast(actual.{{ period }} as varchar)
    where expected.{{ column }} is distinct from actual.{{ column }}
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),
{%- endfor %}

final as (
    select * from fct_tenant_daily_board_differences
    union all
    select * from fct_tenant_weekly_board_differences
)

select * from final
