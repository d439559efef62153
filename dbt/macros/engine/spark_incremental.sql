{#-
    Incremental refresh on Spark (LEDGER_ENGINE=spark). Plain Parquet tables take no DELETE or
    MERGE, so the strategy `refresh` (macros/incremental_refresh.sql) rewrites a table: the rows
    it keeps (those of keys the refresh does not replace) and the rows this run computed are
    written to a scratch table under `<spark_dir>/refresh_scratch/<schema>/<model>`, which then
    overwrites the table (Spark cannot overwrite a table in the query that reads it). The keys are
    the model's `unique_key`, as on DuckDB: no model configures anything for Spark.

    Spark's catalog is in-memory (dbt/profiles.yml), so an incremental run first names the tables
    earlier builds left: `register_model_tables`, from on-run-start. A table rewrite is not atomic;
    `ledger.pipeline.plan` therefore plans a full build after any Spark build that did not complete.
-#}

{#- dbt-spark knows append, merge, insert_overwrite and microbatch; `refresh` is the project's. -#}
{% macro dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) -%}
    {%- if raw_strategy == 'refresh' -%}
        {{ return(raw_strategy) }}
    {%- endif -%}
    {{ return(dbt.dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format)) }}
{%- endmacro %}

{% macro dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) -%}
    {%- if strategy == 'refresh' -%}
        {{ get_incremental_refresh_sql({
            'target_relation': target,
            'temp_relation': source,
            'unique_key': unique_key,
            'dest_columns': adapter.get_columns_in_relation(target),
            'incremental_predicates': incremental_predicates}) }}
    {%- else -%}
        {{ dbt.dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) }}
    {%- endif -%}
{%- endmacro %}

{% macro spark__get_incremental_refresh_sql(arg_dict) -%}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set source = arg_dict['temp_relation'] -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    {%- set scratch = api.Relation.create(
        schema=target.schema, identifier=target.identifier ~ '__dbt_refresh', type='table') -%}
    {%- set location = var('spark_dir') ~ '/refresh_scratch/' ~ target.schema ~ '/' ~ target.identifier -%}
    {#- A row is kept unless the condition holds (NULL keeps it, as DuckDB's DELETE does). -#}
    {%- set rewrite -%}
        create table {{ scratch }} using parquet location '{{ location }}' as
        select {{ columns }} from {{ target }}
        where not coalesce({{ refresh_replaced_condition(arg_dict['unique_key']) }}, false)
        union all
        select {{ columns }} from {{ source }}
    {%- endset -%}
    {%- do run_query('drop table if exists ' ~ scratch) -%}
    {%- do run_query(spark_dialect(rewrite)) -%}
    insert overwrite table {{ target }} select {{ columns }} from {{ scratch }}
{%- endmacro %}

{#- On an incremental Spark run: the tables of the incremental models that earlier builds wrote
    (listed by `ledger.pipeline.spark.export_sources` in sources/ops/spark_model_tables), registered in the
    session's catalog and in dbt's relation cache (filled before on-run-start), so that dbt
    refreshes them instead of creating them anew. -#}
{% macro register_model_tables() -%}
    {%- set listed = run_query('select table_schema, table_name, location from parquet.`'
        ~ var('spark_dir') ~ '/sources/ops/spark_model_tables`') -%}
    {%- set existing = {} -%}
    {%- for row in listed.rows -%}
        {%- do existing.update({row[0] ~ '.' ~ row[1]: row[2]}) -%}
    {%- endfor -%}
    {%- for node in graph.nodes.values() -%}
        {%- set name = node.schema ~ '.' ~ node.alias -%}
        {%- if node.resource_type == 'model' and node.config.materialized == 'incremental'
            and name in existing -%}
            {%- do run_query('create table if not exists ' ~ name ~ " using parquet location '"
                ~ existing[name] ~ "'") -%}
            {%- do adapter.cache_added(api.Relation.create(
                schema=node.schema, identifier=node.alias, type='table')) -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}
