{#-
    The rows of a unit test's fixtures (its `given` inputs and its `expect`). dbt writes each row
    as its own `select ... union all select ...`: on Spark every one of those selects is a plan
    node and a partition of its own, so a 35-row fixture made each stage above it 35 tasks, and a
    unit test on a few rows took 5-25 s. On Spark the rows are one inline table
    (`select * from values (...), (...) as fixture(...)`): one plan node, the same rows, the same
    types (every value is cast to its column's type, as dbt casts it). DuckDB keeps dbt's text.
-#}
{% macro get_fixture_sql(rows, column_name_to_data_types) -%}
    {{ return(adapter.dispatch('get_fixture_sql')(rows, column_name_to_data_types)) }}
{%- endmacro %}

{% macro default__get_fixture_sql(rows, column_name_to_data_types) -%}
    {{ return(dbt.get_fixture_sql(rows, column_name_to_data_types)) }}
{%- endmacro %}

{% macro spark__get_fixture_sql(rows, column_name_to_data_types) -%}
    {%- if not rows -%}
        {{ return(dbt.get_fixture_sql(rows, column_name_to_data_types)) }}
    {%- endif -%}
    {%- set types = {} -%}
    {%- set quoted = {} -%}
    {%- if column_name_to_data_types -%}
        {%- do types.update(column_name_to_data_types) -%}
    {%- else -%}
        {#- A given input: its columns are the input relation's (a relation dbt built). -#}
        {%- for column in adapter.get_columns_in_relation(this) -%}
            {%- do types.update({column.name | lower: column.data_type}) -%}
            {%- do quoted.update({column.name | lower: column.quoted}) -%}
        {%- endfor -%}
        {%- if not types -%}
            {{ return(dbt.get_fixture_sql(rows, column_name_to_data_types)) }}
        {%- endif -%}
    {%- endif -%}
    {{ return(fixture_values(rows, types, quoted)) }}
{%- endmacro %}

{% macro get_expected_sql(rows, column_name_to_data_types, column_name_to_quoted) -%}
    {{ return(adapter.dispatch('get_expected_sql')(rows, column_name_to_data_types, column_name_to_quoted)) }}
{%- endmacro %}

{% macro default__get_expected_sql(rows, column_name_to_data_types, column_name_to_quoted) -%}
    {{ return(dbt.get_expected_sql(rows, column_name_to_data_types, column_name_to_quoted)) }}
{%- endmacro %}

{#- The expected rows name only the columns the test checks: those, in the rows' order. -#}
{% macro spark__get_expected_sql(rows, column_name_to_data_types, column_name_to_quoted) -%}
    {%- if not rows -%}
        {{ return(dbt.get_expected_sql(rows, column_name_to_data_types, column_name_to_quoted)) }}
    {%- endif -%}
    {%- set types = {} -%}
    {%- for name in rows[0].keys() -%}
        {%- do types.update({name | lower: column_name_to_data_types[name | lower]}) -%}
    {%- endfor -%}
    {{ return(fixture_values(rows, types, column_name_to_quoted)) }}
{%- endmacro %}

{#- One inline table of `rows` with the columns of `types` (name -> type), in that order; a column
    a row leaves out is NULL of its type. dbt's `format_row` casts each value (and refuses a
    column the relation does not have). -#}
{% macro fixture_values(rows, types, quoted) -%}
    {%- set lines = [] -%}
    {%- for row in rows -%}
        {%- set given = format_row(row, types) -%}
        {%- set values = [] -%}
        {%- for name, kind in types.items() -%}
            {%- do values.append(given[name] if name in given else safe_cast('null', kind) | trim) -%}
        {%- endfor -%}
        {%- do lines.append('(' ~ (values | join(', ')) ~ ')') -%}
    {%- endfor -%}
    {%- set names = [] -%}
    {%- for name in types.keys() -%}
        {%- do names.append(quoted.get(name, adapter.quote(name))) -%}
    {%- endfor -%}
    select * from values
    {{ lines | join(',\n    ') }}
    as fixture({{ names | join(', ') }})
{%- endmacro %}
