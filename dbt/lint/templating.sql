{#-
    sqlfluff only: dbt/.sqlfluff loads dbt/macros and then this folder, which dbt never reads
    (it is none of dbt_project.yml's paths). The Jinja templater has no dbt adapter, so:
      - each macro dbt dispatches on the adapter renders its default__ (DuckDB) implementation,
        the SQL `dbt build` runs on the default target;
      - a macro that calls a dispatched macro of its own file (Jinja resolves those in the file,
        past the names below), or asks the adapter about a relation, is a stand-in here: an
        expression or query of the same shape, not the same meaning;
      - var() answers the vars the models iterate over with lists of the real shape (the
        vocabulary itself is ledger.vocabulary's; two entries each are enough to lint).
-#}

{% macro var(name, default=none) -%}
    {%- set lists = {
        'components': ['asr', 'llm'],
        'savings_kinds': ['llm', 'tts'],
        'degradation_kinds': ['realtime_to_cascade', 'asr_to_dtmf'],
        'segments': ['endpointing', 'stt_final'],
        'tts_token_meters': ['tts.input_tokens', 'tts.output_audio_tokens'],
        'spark_source_tables': [],
        'spark_plan_tables': [],
        'burn_rate_rules': [
            {'name': 'page_1h_5m', 'severity': 'page', 'factor': 14.4, 'long_seconds': 3600,
             'short_seconds': 300},
            {'name': 'ticket_3d_6h', 'severity': 'ticket', 'factor': 1, 'long_seconds': 259200,
             'short_seconds': 21600},
        ],
        'slo_window_days': 28,
    } -%}
    {{- return(lists.get(name, default if default is not none else name)) -}}
{%- endmacro %}

{% macro to_business_date(timestamp_utc) -%}
    cast({{ timestamp_utc }} as date)
{%- endmacro %}

{% macro billable_seconds(duration_microseconds, increment_seconds) -%}
    ceil({{ duration_microseconds }} / {{ increment_seconds }})
{%- endmacro %}

{% macro decimal_ratio(numerator, denominator, scale, multiplier=1) -%}
    round({{ multiplier }} * ({{ numerator }}) / ({{ denominator }}), {{ scale }})
{%- endmacro %}

{% macro percentage(numerator, denominator) -%}
    {{ decimal_ratio(numerator, denominator, scale=6, multiplier=100) }}
{%- endmacro %}

{% macro seconds_to_minutes(seconds) -%}
    {{ decimal_ratio(seconds, 60, scale=12) }}
{%- endmacro %}

{% macro default__sum_over_integers(start, stop, variable, expression) -%}
    list_sum(list_transform(range({{ start }}, {{ stop }}), lambda {{ variable }}: {{ expression }}))
{%- endmacro %}

{% macro imported_provider_costs() -%}
    select * from imports.provider_costs
{%- endmacro %}

{% macro add_minutes() %}{{ return(default__add_minutes(*varargs, **kwargs)) }}{% endmacro %}
{% macro asof_left_join() %}{{ return(default__asof_left_join(*varargs, **kwargs)) }}{% endmacro %}
{% macro business_day_start_utc() %}{{ return(default__business_day_start_utc(*varargs, **kwargs)) }}{% endmacro %}
{% macro day_starts() %}{{ return(default__day_starts(*varargs, **kwargs)) }}{% endmacro %}
{% macro get_incremental_refresh_sql() %}{{ return(default__get_incremental_refresh_sql(*varargs, **kwargs)) }}{% endmacro %}
{% macro hour_starts() %}{{ return(default__hour_starts(*varargs, **kwargs)) }}{% endmacro %}
{% macro integer_divide() %}{{ return(default__integer_divide(*varargs, **kwargs)) }}{% endmacro %}
{% macro integer_range() %}{{ return(default__integer_range(*varargs, **kwargs)) }}{% endmacro %}
{% macro iso_week_label() %}{{ return(default__iso_week_label(*varargs, **kwargs)) }}{% endmacro %}
{% macro json_object_text() %}{{ return(default__json_object_text(*varargs, **kwargs)) }}{% endmacro %}
{% macro json_string_field() %}{{ return(default__json_string_field(*varargs, **kwargs)) }}{% endmacro %}
{% macro log_gamma() %}{{ return(default__log_gamma(*varargs, **kwargs)) }}{% endmacro %}
{% macro ordered_string_agg() %}{{ return(default__ordered_string_agg(*varargs, **kwargs)) }}{% endmacro %}
{% macro raise_error() %}{{ return(default__raise_error(*varargs, **kwargs)) }}{% endmacro %}
{% macro redacted_sample() %}{{ return(default__redacted_sample(*varargs, **kwargs)) }}{% endmacro %}
{% macro refreshed_weeks_event_date_bounds() %}{{ return(default__refreshed_weeks_event_date_bounds(*varargs, **kwargs)) }}{% endmacro %}
{% macro regexp_full_match() %}{{ return(default__regexp_full_match(*varargs, **kwargs)) }}{% endmacro %}
{% macro register_sources() %}{{ return(default__register_sources(*varargs, **kwargs)) }}{% endmacro %}
{% macro sum_over_integers() %}{{ return(default__sum_over_integers(*varargs, **kwargs)) }}{% endmacro %}
{% macro to_reporting_time() %}{{ return(default__to_reporting_time(*varargs, **kwargs)) }}{% endmacro %}
{% macro try_parse_json() %}{{ return(default__try_parse_json(*varargs, **kwargs)) }}{% endmacro %}
{% macro try_to_utc_timestamp() %}{{ return(default__try_to_utc_timestamp(*varargs, **kwargs)) }}{% endmacro %}
{% macro union_all_by_name() %}{{ return(default__union_all_by_name(*varargs, **kwargs)) }}{% endmacro %}
{% macro unnest_list() %}{{ return(default__unnest_list(*varargs, **kwargs)) }}{% endmacro %}
{% macro warehouse_columns() %}{{ return(default__warehouse_columns(*varargs, **kwargs)) }}{% endmacro %}
