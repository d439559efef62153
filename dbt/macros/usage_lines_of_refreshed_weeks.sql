{#- The first two CTEs of an aggregate of priced usage lines keyed by their sessions' business
    date (`unique_key='business_date'`): `sessions`, the resolved sessions of the refreshed ISO
    weeks (all on a full refresh), and `usage_lines`, the priced usage lines to join to them. On a
    refresh run only the lines of the UTC dates those sessions have events on are read (from the
    planner's index `ops.session_event_dates`, so a line is never missed however far from its
    session's start it lies), none when they have none; every line on a full refresh, or where
    there is no index to ask (Spark: every date). The caller joins the two on session_id. -#}
{% macro refreshed_weeks_sessions_and_usage_lines() -%}
    {%- set usage_dates = refreshed_weeks_event_date_bounds(ref('int_sessions_resolved')) -%}
sessions as (
    select * from {{ ref('int_sessions_resolved') }} {{ refresh_filter('business_date', 'week') }}
),

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }}
    {%- if is_refresh_run() and usage_dates is not none %}
    {%- if usage_dates[0] is none %}
    where false
    {%- else %}
    where usage_date between cast('{{ usage_dates[0] }}' as date)
        and cast('{{ usage_dates[1] }}' as date)
    {%- endif %}
    {%- endif %}
)
{%- endmacro %}
