{#-
    LEDGER_ENGINE=spark. The models are written in DuckDB's SQL; what differs on Spark in meaning
    (time zones, integer division, JSON, lists, string aggregates) is a dispatched macro
    (engine/functions.sql). What differs only in spelling is rewritten here, on the compiled SQL
    of every table, view and test Spark runs, so that the models keep one text:
      - a trailing comma before FROM or WHERE (DuckDB accepts `select a, b, from t`; Spark does
        not);
      - function names of the same meaning: epoch_us -> unix_micros, arg_max -> max_by,
        regexp_matches -> regexp_like, quantile_cont -> percentile (both interpolate linearly);
      - "Quoted" identifiers -> `quoted` (Spark reads double quotes as a string);
      - type names: VARCHAR -> STRING, HUGEINT -> DECIMAL(38, 0) (exact integers up to 38 digits,
        as HUGEINT is in the ledger's use), UBIGINT -> DECIMAL(20, 0), TIMESTAMPTZ -> TIMESTAMP.
-#}
{% macro spark_dialect(sql) -%}
    {%- set re = modules.re -%}
    {#- Odd pieces are string literals and comments, left as they are. -#}
    {%- set pieces = re.split("('(?:[^']|'')*'|--[^\\n]*|/\\*[\\s\\S]*?\\*/)", sql) -%}
    {%- set out = [] -%}
    {%- for piece in pieces -%}
        {%- if loop.index0 is odd -%}
            {%- do out.append(piece) -%}
        {%- else -%}
            {%- set piece = re.sub('(?i)\\bepoch_us\\s*\\(', 'unix_micros(', piece) -%}
            {%- set piece = re.sub('(?i)\\barg_max\\s*\\(', 'max_by(', piece) -%}
            {%- set piece = re.sub('(?i)\\bquantile_cont\\s*\\(', 'percentile(', piece) -%}
            {%- set piece = re.sub('(?i)\\bstarts_with\\s*\\(', 'startswith(', piece) -%}
            {%- set piece = re.sub('(?i)\\bends_with\\s*\\(', 'endswith(', piece) -%}
            {%- set piece = re.sub('(?i)\\bregexp_matches\\s*\\(', 'regexp_like(', piece) -%}
            {%- set piece = re.sub('"([A-Za-z_][A-Za-z0-9_]*)"', '`\\1`', piece) -%}
            {%- set piece = re.sub('(?i)\\bvarchar\\b(?!\\s*\\()', 'string', piece) -%}
            {%- set piece = re.sub('(?i)\\bhugeint\\b', 'decimal(38, 0)', piece) -%}
            {%- set piece = re.sub('(?i)\\bubigint\\b', 'decimal(20, 0)', piece) -%}
            {%- set piece = re.sub('(?i)\\btimestamptz\\b', 'timestamp', piece) -%}
            {%- do out.append(piece) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set sql = out | join('') -%}
    {#- After the pieces are joined: a comma and FROM may lie on two sides of a comment. -#}
    {%- set sql = re.sub('(?i),(\\s*(?:--[^\\n]*\\n\\s*)*)\\b(from|where)\\b', '\\1\\2', sql) -%}
    {{- return(sql) -}}
{%- endmacro %}

{%- macro spark__create_table_as(temporary, relation, compiled_code, language='sql') -%}
    {#- Models partitioned by week (engine/spark_incremental.sql); not their unit tests. -#}
    {%- if language == 'sql' and model.resource_type == 'model' and config.get('partition_week_of') -%}
        {{ return(spark_week_partitioned_table_as(temporary, relation, spark_dialect(compiled_code))) }}
    {%- elif language == 'sql' -%}
        {{ return(dbt.spark__create_table_as(temporary, relation, spark_dialect(compiled_code), language)) }}
    {%- else -%}
        {{ return(dbt.spark__create_table_as(temporary, relation, compiled_code, language)) }}
    {%- endif -%}
{%- endmacro -%}

{% macro spark__create_view_as(relation, sql) -%}
    {{ return(dbt.spark__create_view_as(relation, spark_dialect(sql))) }}
{%- endmacro %}

{#- Model contracts: the yml's data types (VARCHAR) in the schema check dbt runs on Spark. -#}
{% macro spark__get_empty_schema_sql(columns) -%}
    {{ return(spark_dialect(dbt.default__get_empty_schema_sql(columns))) }}
{%- endmacro %}

{% macro spark__get_empty_subquery_sql(select_sql, select_sql_header=none) -%}
    {{ return(spark_dialect(dbt.default__get_empty_subquery_sql(select_sql, select_sql_header))) }}
{%- endmacro %}

{% macro spark__get_test_sql(main_sql, fail_calc, warn_if, error_if, limit) -%}
    {{ return(dbt.default__get_test_sql(spark_dialect(main_sql), fail_calc, warn_if, error_if, limit)) }}
{%- endmacro %}

{#- dbt's `unique` test, the same rows (each key found more than once, with its count), with the
    keys shuffled before they are counted: a key test's keys are nearly all distinct, and Spark's
    counting of them ahead of the shuffle (to send fewer rows) sends as many and costs a hash
    table of every key per task (the bench month's event key: 9.3-12.5 s of CPU against 6.5-7.6 s
    so). Without a partition count, adaptive execution still packs a small
    table's keys into one task. -#}
{% macro spark__test_unique(model, column_name) -%}
select
    unique_field,
    count(*) as n_records
from (
    select /*+ REPARTITION(unique_field) */ {{ column_name }} as unique_field
    from {{ model }}
    where {{ column_name }} is not null
) as keyed
group by unique_field
having count(*) > 1
{%- endmacro %}

{#- dbt's `relationships` test, the same rows (each child row whose value no parent row has), by
    an anti join: the outer join of the default pairs a child row with every parent row of its
    value before it drops the matched ones, and a parent such as the session ledger has thousands
    of rows per tenant (fct_usage_cost_daily's tenants: 1.1-1.4 s of CPU against 0.4-0.7 s so). -#}
{% macro spark__test_relationships(model, column_name, to, field) -%}
with child as (
    select {{ column_name }} as from_field
    from {{ model }}
    where {{ column_name }} is not null
),

parent as (
    select {{ field }} as to_field
    from {{ to }}
)

select from_field
from child
left anti join parent
    on child.from_field = parent.to_field
{%- endmacro %}

{% macro spark__get_unit_test_sql(main_sql, expected_fixture_sql, expected_column_names) -%}
    {{ return(dbt.default__get_unit_test_sql(spark_dialect(main_sql), spark_dialect(expected_fixture_sql), expected_column_names)) }}
{%- endmacro %}

{#-
    on-run-start: the sources under the names the models use (raw.*, reference.*), over the files
    `ledger.pipeline.spark.export_sources` wrote; raw.events is a view over exactly the Parquet files the
    manifest raw.event_files lists, read in place (with no file: over an empty file of its schema).
    On an incremental run also the refresh plan (ops.*) and the incremental models' tables
    (engine/spark_incremental.sql). Nothing on DuckDB, whose warehouse has them.
-#}
{% macro register_sources() -%}
    {{ return(adapter.dispatch('register_sources')()) }}
{%- endmacro %}

{% macro default__register_sources() -%}
    select 1
{%- endmacro %}

{% macro spark__register_sources() -%}
    {%- if not execute -%}{{ return('select 1') }}{%- endif -%}
    {%- set sources = var('spark_dir') ~ '/sources' -%}
    {%- do run_query('create database if not exists raw') -%}
    {%- do register_exported_tables(sources, var('spark_source_tables')) -%}
    {#- One scan of exactly the listed files: a Hadoop glob `<root>/{a.parquet,b.parquet}` (a
        union of one scan per file costs a plan node per file in every query that reads events). -#}
    {%- set files = run_query('select root, path from parquet.`' ~ sources ~ '/raw/event_files` order by path') -%}
    {%- if files.rows | length > 0 -%}
        {%- set listed = [] -%}
        {%- for row in files.rows -%}
            {%- do listed.append(modules.re.sub('([\\\\{}\\[\\]*?,])', '\\\\\\1', row[1])) -%}
        {%- endfor -%}
        {%- set location = files.rows[0][0] ~ '/{' ~ (listed | join(',')) ~ '}' -%}
    {%- else -%}
        {%- set location = sources ~ '/raw/events_schema' -%}
    {%- endif -%}
    {#- With raw.events' own column types, not those of whichever file Spark would take them from
        (the first listed): writers of the raw layer differ in physical integer widths (file_id
        is INT32 in some files, INT64 in others), and Spark reads a narrower integer into a wider
        column, never the reverse. A table is what takes a schema (in a schema of its own, which the
        project's catalog checks do not list); the view over it keeps exactly raw.events' columns
        (the table adds the `event_date=` folders as a column). -#}
    {%- set described = run_query('describe query select * from parquet.`' ~ sources ~ '/raw/events_schema`') -%}
    {%- set columns = [] -%}
    {%- for row in described.rows -%}
        {%- do columns.append('`' ~ row[0] ~ '`') -%}
    {%- endfor -%}
    {%- set typed = [] -%}
    {%- for row in described.rows -%}
        {%- do typed.append('`' ~ row[0] ~ '` ' ~ row[1]) -%}
    {%- endfor -%}
    {%- do run_query('create database if not exists raw_files') -%}
    {%- do run_query('drop table if exists raw_files.events') -%}
    {%- do run_query('create table raw_files.events (' ~ (typed | join(', '))
        ~ ") using parquet options (path '" ~ location.replace('\\', '\\\\').replace("'", "\\'") ~ "')") -%}
    {%- do run_query('create or replace view raw.events as select ' ~ (columns | join(', '))
        ~ ' from raw_files.events') -%}
    {#- An incremental run: the refresh plan (ledger.pipeline.plan) and the tables earlier builds left. -#}
    {%- if is_refresh_run() -%}
        {%- do register_exported_tables(sources, var('spark_plan_tables')) -%}
        {%- do register_model_tables() -%}
    {%- endif -%}
    select 1
{%- endmacro %}

{#- The tables `<schema>.<name>` that ledger.pipeline.spark.export_sources wrote under `sources`
    (`<schema>/<name>/`; the lists are its SOURCE_TABLES and PLAN_TABLES, passed as vars), each
    named in the session's catalog anew. -#}
{% macro register_exported_tables(sources, tables) -%}
    {%- set schemas = [] -%}
    {%- for table in tables -%}
        {%- set schema = table.split('.')[0] -%}
        {%- if schema not in schemas -%}
            {%- do schemas.append(schema) -%}
            {%- do run_query('create database if not exists ' ~ schema) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for table in tables -%}
        {%- do run_query('drop table if exists ' ~ table) -%}
        {%- do run_query('create table ' ~ table ~ " using parquet location '" ~ sources ~ '/'
                         ~ table.replace('.', '/') ~ "'") -%}
    {%- endfor -%}
{%- endmacro %}
