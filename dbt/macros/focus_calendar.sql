{#- The UTC instant at which a date of the reporting time zone begins (FOCUS charge periods are
    the business day in UTC bounds). -#}
{% macro business_day_start_utc(date_expression) -%}
    {{ return(adapter.dispatch('business_day_start_utc')(date_expression)) }}
{%- endmacro %}

{% macro spark__business_day_start_utc(date_expression) -%}
    to_utc_timestamp(cast({{ date_expression }} as timestamp), '{{ var("timezone") }}')
{%- endmacro %}

{% macro default__business_day_start_utc(date_expression) -%}
    ((cast({{ date_expression }} as timestamp) at time zone '{{ var("timezone") }}')
        at time zone 'UTC')
{%- endmacro %}
