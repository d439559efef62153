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

    The large marts are partitioned by ISO week on Spark (config `partition_week_of`, a date
    expression of each row): a refresh then rewrites only the weeks it touches (dynamic partition
    overwrite) and leaves the rest of the history's files alone. The partition column
    `refresh_week` (the week's Monday) exists on Spark only, last, as Spark puts partition columns;
    publishing leaves it out (ledger.pipeline.spark.marts_selects), so the published marts and the
    export have DuckDB's columns.
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
    {%- set names = arg_dict['dest_columns'] | map(attribute='name') | list -%}
    {%- set columns = get_quoted_csv(names) -%}
    {%- set scratch = api.Relation.create(
        schema=target.schema, identifier=target.identifier ~ '__dbt_refresh', type='table') -%}
    {%- set location = var('spark_dir') ~ '/refresh_scratch/' ~ target.schema ~ '/' ~ target.identifier -%}
    {#- A row is kept unless the condition holds (NULL keeps it, as DuckDB's DELETE does). -#}
    {%- set kept = 'not coalesce(' ~ refresh_replaced_condition(arg_dict['unique_key']) ~ ', false)' -%}
    {%- if not config.get('partition_week_of') -%}
        {%- set rewrite -%}
            create table {{ scratch }} using parquet location '{{ location }}' as
            select {{ columns }} from {{ target }} where {{ kept }}
            union all
            select {{ columns }} from {{ source }}
        {%- endset -%}
        {%- do run_query('drop table if exists ' ~ scratch) -%}
        {%- do run_query(spark_dialect(rewrite)) -%}
        insert overwrite table {{ target }} select {{ columns }} from {{ scratch }}
    {%- else -%}
        {#- Partitioned by week: the scratch holds the kept rows of the refresh weeks only (read
            by partition) and the recomputed rows; dynamic overwrite then replaces exactly the
            weeks present in it. -#}
        {%- set weeks = refresh_week_literals() -%}
        {%- set rewrite -%}
            create table {{ scratch }} using parquet location '{{ location }}' as
            select {{ columns }} from {{ target }}
            where {{ refresh_weeks_in(weeks) }} and {{ kept }}
            union all
            select {{ columns }} from {{ source }}
        {%- endset -%}
        {%- do run_query('drop table if exists ' ~ scratch) -%}
        {%- do run_query(spark_dialect(rewrite)) -%}
        {%- set present = run_query('select distinct cast(refresh_week as string) from ' ~ scratch)
            .columns[0].values() | list -%}
        {#- A recomputed row outside the refresh weeks (the plan says there is none): its week's
            kept rows join the scratch, or the overwrite of that week would drop them. -#}
        {%- set outside = present | reject('in', weeks) | list -%}
        {%- if outside -%}
            {%- do run_query(spark_dialect('insert into ' ~ scratch ~ ' select ' ~ columns ~ ' from '
                ~ target ~ ' where ' ~ refresh_weeks_in(outside) ~ ' and ' ~ kept)) -%}
        {%- endif -%}
        {%- do run_query('set spark.sql.sources.partitionOverwriteMode = dynamic') -%}
        {#- A refresh week with no row left is not in the scratch: emptied by a static overwrite. -#}
        {%- for week in weeks | reject('in', present) -%}
            {%- do run_query('insert overwrite table ' ~ target ~ " partition (refresh_week = date '"
                ~ week ~ "') select " ~ get_quoted_csv(names | reject('equalto', 'refresh_week'))
                ~ ' from ' ~ scratch ~ ' where false') -%}
        {%- endfor -%}
        insert overwrite table {{ target }} select {{ columns }} from {{ scratch }}
    {%- endif -%}
{%- endmacro %}

{#- `refresh_week in (...)` of these weeks (text; none stands for NULL); `false` for none. -#}
{% macro refresh_weeks_in(weeks) -%}
    {%- set tests = [] -%}
    {%- set dated = [] -%}
    {%- for week in weeks -%}
        {%- if week is none -%}
            {%- do tests.append('refresh_week is null') -%}
        {%- else -%}
            {%- do dated.append("date '" ~ week ~ "'") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if dated -%}
        {%- do tests.append('refresh_week in (' ~ dated | join(', ') ~ ')') -%}
    {%- endif -%}
    ({{ tests | join(' or ') if tests else 'false' }})
{%- endmacro %}

{#- The Spark table of a model with `partition_week_of` (a date expression): its rows and the
    week column `refresh_week` after them, partitioned by it. A model with an enforced contract is
    checked against its contract first, as dbt-spark does, and the column added after. -#}
{% macro spark_week_partitioned_table_as(temporary, relation, compiled_code) -%}
    {%- set code = compiled_code -%}
    {%- if config.get('contract').enforced -%}
        {%- if not temporary -%}
            {%- do get_assert_columns_equivalent(compiled_code) -%}
        {%- endif -%}
        {%- set code = get_select_subquery(compiled_code) -%}
    {%- endif -%}
    {%- set code -%}
        select *, {{ refresh_week_of(config.get('partition_week_of')) }} as refresh_week
        from ({{ code }}) as week_partitioned
    {%- endset -%}
    {%- if temporary -%}
        {{ create_temporary_view(relation, code) }}
    {%- else -%}
        create table {{ relation }}
        {{ file_format_clause() }}
        partitioned by (refresh_week)
        {{ location_clause() }}
        as
        {{ code }}
    {%- endif -%}
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
            {#- A week-partitioned table: Spark takes the partition column from the folders'
                names, and its partitions (also those a build by another session wrote, should
                the catalog outlive a build, as a Connect server's does) from the folders. -#}
            {%- if node.config.get('partition_week_of') -%}
                {%- do run_query('alter table ' ~ name ~ ' recover partitions') -%}
            {%- endif -%}
            {%- do adapter.cache_added(api.Relation.create(
                schema=node.schema, identifier=node.alias, type='table')) -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}
