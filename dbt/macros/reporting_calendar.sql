{#- Timestamps are naive UTC. `x at time zone 'UTC'` makes them TIMESTAMPTZ; `at time zone <zone>`
    turns that into the wall clock of the reporting zone (DST-aware, via ICU). -#}
{% macro to_reporting_time(timestamp_utc) -%}
    {{ return(adapter.dispatch('to_reporting_time')(timestamp_utc)) }}
{%- endmacro %}

{% macro default__to_reporting_time(timestamp_utc) -%}
    (({{ timestamp_utc }} at time zone 'UTC') at time zone '{{ var("timezone") }}')
{%- endmacro %}

{#- Spark (session time zone UTC): the same wall clock, DST-aware, from the JVM's zone rules. -#}
{% macro spark__to_reporting_time(timestamp_utc) -%}
    from_utc_timestamp({{ timestamp_utc }}, '{{ var("timezone") }}')
{%- endmacro %}

{#- SPEC 5: a session's business_date is the date of its start in the reporting time zone. -#}
{% macro to_business_date(timestamp_utc) -%}
    cast({{ to_reporting_time(timestamp_utc) }} as date)
{%- endmacro %}

{#- ISO week label of a date, e.g. '2026-W47' (ISO year, which differs from the calendar year
    around New Year). -#}
{% macro iso_week_label(date_expression) -%}
    {{ return(adapter.dispatch('iso_week_label')(date_expression)) }}
{%- endmacro %}

{% macro default__iso_week_label(date_expression) -%}
    strftime({{ date_expression }}, '%G-W%V')
{%- endmacro %}

{% macro spark__iso_week_label(date_expression) -%}
    concat(
        cast(extract(yearofweek from {{ date_expression }}) as string),
        '-W',
        lpad(cast(extract(week from {{ date_expression }}) as string), 2, '0')
    )
{%- endmacro %}

{#- Monday of the ISO week of a date. -#}
{% macro iso_week_start(date_expression) -%}
    cast(date_trunc('week', {{ date_expression }}) as date)
{%- endmacro %}
