{#-
    The finance aggregates of `fct_session_ledger` over any grain (tenant x day, tenant x week):
    sums of unrounded session amounts, so a mart total equals the sum of its sessions exactly.
    revenue sums the billed sessions (NULL when none is billed); total_cost counts every session,
    open ones included (their cost so far); gross_margin = revenue - total_cost.
-#}
{% macro margin_aggregates(ledger) -%}
    count(*) as session_count,
    count(*) filter (where not {{ ledger }}.is_open) as closed_session_count,
    count(*) filter (where {{ ledger }}.is_open) as open_session_count,
    count(*) filter (where {{ ledger }}.revenue_status = 'billed') as billed_session_count,
    cast(coalesce(sum({{ ledger }}.billable_seconds), 0) as bigint) as billable_seconds,
    coalesce(sum({{ ledger }}.billable_minutes), {{ money(0) }}) as billable_minutes,
    sum({{ ledger }}.revenue) as revenue,
    {%- for component in var('components') %}
    sum({{ ledger }}.{{ component }}_cost) as {{ component }}_cost,
    {%- endfor %}
    sum({{ ledger }}.total_cost) as total_cost,
    cast(sum({{ ledger }}.interruption_count) as bigint) as interruption_count,
    cast(sum({{ ledger }}.false_interruption_count) as bigint) as false_interruption_count,
    sum({{ ledger }}.interruption_waste_cost) as interruption_waste_cost,
    sum({{ ledger }}.cache_savings) as cache_savings,
    {%- for kind in var('savings_kinds') %}
    sum({{ ledger }}.{{ kind }}_cache_savings) as {{ kind }}_cache_savings,
    {%- endfor %}
    cast(sum({{ ledger }}.degradation_count) as bigint) as degradation_count,
    cast(sum({{ ledger }}.unpriced_usage_event_count) as bigint) as unpriced_usage_event_count,
    cast(sum({{ ledger }}.unpriced_interruption_count) as bigint) as unpriced_interruption_count,
    count(*) filter (where {{ ledger }}.has_unpriced_usage) as sessions_with_unpriced_usage,
{%- endmacro %}

{#- The columns computed from the aggregates above, in the order the marts list them. -#}
{% macro margin_columns() -%}
    session_count,
    closed_session_count,
    open_session_count,
    billed_session_count,
    billable_seconds,
    billable_minutes,
    revenue,
    asr_cost,
    llm_cost,
    tts_cost,
    realtime_cost,
    vision_cost,
    infra_cost,
    total_cost,
    {{ money('revenue - total_cost') }} as gross_margin,
    {{ percentage('revenue - total_cost', 'revenue') }} as gross_margin_pct,
    interruption_count,
    false_interruption_count,
    interruption_waste_cost,
    cache_savings,
    llm_cache_savings,
    realtime_cache_savings,
    tts_cache_savings,
    vision_cache_savings,
    degradation_count,
    unpriced_usage_event_count,
    unpriced_interruption_count,
    sessions_with_unpriced_usage,
{%- endmacro %}
