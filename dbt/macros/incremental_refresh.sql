{#-
    Incremental refresh (issue 11): a build recomputes only what new data touches.

    `ledger.pipeline.plan` plans each build before dbt runs and passes `refresh_mode` as a var:
    - 'full' (a first build, `ledger build --full-refresh`, a changed project, vars or reference
      tables other than rate card / FX / price plans): dbt runs with --full-refresh, staging reads
      every event and every filter below is empty.
    - 'incremental': staging reads `ops.refresh_events` (the events of the sessions in
      `ops.refresh_sessions`, read from the Parquet partitions of their event dates only);
      session-keyed models replace the rows of those sessions, date-keyed aggregates replace the
      whole ISO weeks in `ops.refresh_weeks` (recomputed from the session-level tables, so weekly
      percentiles see every turn of the week).

    A model opts in with a config header, for example
        {{ config(materialized='incremental', unique_key='session_id') }}
        {{ config(materialized='incremental', unique_key='business_date') }}
    A `unique_key` ending in 'session_id' replaces by session; any other key is a date expression whose ISO
    week decides which rows are replaced. The strategy (`refresh`) and `on_schema_change: fail` come
    from dbt_project.yml.
-#}

{% macro is_refresh_run() -%}
    {{- return(var('refresh_mode', 'full') == 'incremental') -}}
{%- endmacro %}

{#- The relation staging reads events from. -#}
{% macro refresh_events_relation(all_events, refresh_events) -%}
    {%- if is_refresh_run() -%}{{ refresh_events }}{%- else -%}{{ all_events }}{%- endif -%}
{%- endmacro %}

{#- The ISO week (its Monday) of a date expression. -#}
{% macro refresh_week_of(date_expression) -%}
    cast(date_trunc('week', {{ date_expression }}) as date)
{%- endmacro %}

{#- The refresh weeks as literals, read once at execution, so scans can be pruned on the date. -#}
{% macro refresh_week_literals() -%}
    {%- if execute and is_refresh_run() -%}
        {%- set rows = run_query('select cast(week_start as string) from ops.refresh_weeks order by 1') -%}
        {%- set weeks = rows.columns[0].values() | list -%}
    {%- else -%}
        {%- set weeks = [] -%}
    {%- endif -%}
    {{- return(weeks) -}}
{%- endmacro %}

{#- The condition that keeps the rows a refresh recomputes (`true` on a full refresh).
    key: 'session_id' (a session id column) or a date expression (kept when its ISO week is
    being refreshed). -#}
{% macro refresh_condition(column, key='session') -%}
    {%- if not is_refresh_run() -%}
        true
    {%- elif key == 'session' -%}
        {{ column }} in (select session_id from ops.refresh_sessions)
    {%- else -%}
        {%- set weeks = refresh_week_literals() -%}
        {%- if weeks | length == 0 -%}
            false
        {%- else -%}
            ({{ column }} >= cast('{{ weeks[0] }}' as date) - 1
            and {{ column }} < cast('{{ weeks[-1] }}' as date) + 8
            and {{ refresh_week_of(column) }} in (
                {%- for week in weeks %}cast('{{ week }}' as date){{ ', ' if not loop.last }}{% endfor -%}
            ))
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- `where <refresh_condition>`, to append to `select * from {{ ref(...) }}`; empty on a full
    refresh. -#}
{% macro refresh_filter(column, key='session') -%}
    {%- if is_refresh_run() -%}
        where {{ refresh_condition(column, key) }}
    {%- endif -%}
{%- endmacro %}

{#- The newest event in the warehouse (the clock of the missing_end watermark, SPEC 5): on a
    refresh the planner has read it from the manifest of raw files, not from every event. -#}
{% macro newest_event_at_relation(events) -%}
    {%- if is_refresh_run() -%}
        select newest_event_at from ops.refresh_run
    {%- else -%}
        select max(occurred_at) as newest_event_at from {{ events }}
    {%- endif -%}
{%- endmacro %}

{#- The custom incremental strategy `refresh`: delete every row of the refreshed keys (also keys
    that produce no row any more, so a session or week that moved leaves nothing behind), then
    insert what this run computed. Dispatched: Spark's Parquet tables take no DELETE
    (engine/spark_incremental.sql). -#}
{% macro get_incremental_refresh_sql(arg_dict) -%}
    {{ return(adapter.dispatch('get_incremental_refresh_sql')(arg_dict)) }}
{%- endmacro %}

{#- The condition on a model's rows that a refresh replaces: its `unique_key` ending in
    'session_id' by session, else a date expression by ISO week; or the model's `refresh_also`. -#}
{% macro refresh_replaced_condition(key) -%}
    {%- set also = config.get('refresh_also') -%}
    {%- if key.endswith('session_id') -%}
        {%- set condition = refresh_condition(key, 'session') -%}
    {%- else -%}
        {%- set condition = refresh_condition(key, 'week') -%}
    {%- endif -%}
    {{ condition }}{% if also %} or ({{ also }}){% endif %}
{%- endmacro %}

{% macro default__get_incremental_refresh_sql(arg_dict) -%}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set source = arg_dict['temp_relation'] -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    delete from {{ target }} where {{ refresh_replaced_condition(arg_dict['unique_key']) }};
    insert into {{ target }} ({{ columns }}) select {{ columns }} from {{ source }};
{%- endmacro %}

{#- `where` the interval [from, to) overlaps the refresh weeks widened by two days (a business
    date is at most a day from its UTC date); empty on a full refresh. -#}
{% macro refresh_overlap_filter(from_column, to_column) -%}
    {%- if is_refresh_run() -%}
        {%- set weeks = refresh_week_literals() -%}
        {%- if weeks | length == 0 -%}
            where false
        {%- else -%}
            where {{ to_column }} > cast(cast('{{ weeks[0] }}' as date) - 2 as timestamp)
            and {{ from_column }} < cast(cast('{{ weeks[-1] }}' as date) + 9 as timestamp)
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- dbt's hook for a test's `where` config, extended: on an incremental run a data test on an
    incremental model checks only the rows of the refreshed sessions or weeks, and a test on
    raw.events only the refreshed sessions' events; a full refresh checks everything. -#}
{% macro get_where_subquery(relation) -%}
    {%- set where = config.get('where') -%}
    {#- a namespace: a plain `set` inside the loop would not be seen after it -#}
    {%- set found = namespace(relation=relation, condition=none) -%}
    {%- if is_refresh_run() and execute -%}
        {%- if relation.schema == 'raw' and relation.identifier == 'events' -%}
            {%- set found.relation = 'ops.refresh_events' -%}
        {%- else -%}
            {%- for node in graph.nodes.values() -%}
                {%- if node.resource_type == 'model' and node.schema == relation.schema
                    and node.alias == relation.identifier
                    and node.config.materialized == 'incremental' -%}
                    {%- set key = node.config.unique_key -%}
                    {%- set found.condition = refresh_condition(
                        key, 'session' if key.endswith('session_id') else 'week') -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    {%- if where or found.condition -%}
        (select * from {{ found.relation }}
         where ({{ where or 'true' }}) and ({{ found.condition or 'true' }})) dbt_subquery
    {%- else -%}
        {{ found.relation }}
    {%- endif -%}
{%- endmacro %}

{#- On a refresh run, [first, last] UTC date (as text) on which the sessions of the refreshed weeks
    (`sessions_relation`, by `business_date`) have events, from the planner's index
    `ops.session_event_dates`; [none, none] when they have none; none when there is no index to
    ask, so the caller reads every date (Spark: the index stays in the DuckDB warehouse, and a
    Spark refresh rewrites each incremental table whole anyway). -#}
{% macro refreshed_weeks_event_date_bounds(sessions_relation) -%}
    {{ return(adapter.dispatch('refreshed_weeks_event_date_bounds')(sessions_relation)) }}
{%- endmacro %}

{% macro default__refreshed_weeks_event_date_bounds(sessions_relation) -%}
    {%- if not (execute and is_refresh_run()) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set bounds = run_query(
        "select cast(min(event_date) as string), cast(max(event_date) as string)"
        ~ " from ops.session_event_dates where session_id in (select session_id from "
        ~ sessions_relation ~ " where " ~ refresh_condition('business_date', 'week') ~ ")"
    ) -%}
    {{ return(bounds.rows[0].values() | list) }}
{%- endmacro %}

{% macro spark__refreshed_weeks_event_date_bounds(sessions_relation) -%}
    {{ return(none) }}
{%- endmacro %}
