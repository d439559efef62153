-- Reported to Dagster as a check on fct_experience_tenant_daily (the test reads several models).
{{ config(meta={"dagster": {"ref": {"name": "fct_experience_tenant_daily"}}}) }}
-- Every rate and share of the experience marts lies in [0, 1] (or is NULL: no denominator).
-- Returns one row per offending value. On an incremental build it reads the refreshed ISO weeks
-- only (both marts are incremental by business_date; the other weeks were checked before).
{%- set rates = {
    'fct_experience_tenant_daily': ['tenant_id', 'business_date'],
} %}
{%- set rate_columns = [
    'interruption_rate', 'false_interruption_rate', 'prefix_cache_hit_rate',
    'tts_phrase_cache_hit_rate', 'vision_cache_hit_rate', 'degradation_rate',
    'degradation_rate_realtime_to_cascade', 'degradation_rate_asr_to_dtmf',
    'degradation_rate_tts_filler', 'degradation_rate_vision_clamp',
    'degradation_rate_provider_failover',
] %}
{%- set budget_tables = {
    'fct_latency_budget_tenant_daily': ['tenant_id', 'business_date', 'segment'],
} %}

with

offending as (
    {%- for model, keys in rates.items() %}
    {%- for column in rate_columns %}
    select
        '{{ model }}' as model_name,
        concat_ws('|', {{ keys | join(', ') }}) as row_key,
        '{{ column }}' as column_name,
        {{ column }} as value,
    from {{ ref(model) }}
    where {{ column }} not between 0 and 1
        and {{ refresh_condition('business_date', 'week') }}
    union all
    {%- endfor %}
    {%- endfor %}
    {%- for model, keys in budget_tables.items() %}
    select
        '{{ model }}' as model_name,
        concat_ws('|', {{ keys | join(', ') }}) as row_key,
        'over_budget_share' as column_name,
        over_budget_share as value,
    from {{ ref(model) }}
    where over_budget_share not between 0 and 1
        and {{ refresh_condition('business_date', 'week') }}
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),

final as (
    select * from offending
)

select * from final
