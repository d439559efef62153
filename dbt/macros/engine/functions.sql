{#-
    Expressions whose spelling or meaning differs between the engines the project runs on
    (LEDGER_ENGINE=duckdb|spark), dispatched on the adapter. The models call these instead of an
    engine's own function; the DuckDB text is the `default__` one.
-#}

{#- `value` of the rows, in `order_by` order, joined by `separator` (DISTINCT values if asked),
    over the rows `filter_where` keeps; NULL when no row has a value. -#}
{% macro ordered_string_agg(value, separator, order_by, distinct=false, filter_where=none) -%}
    {{ return(adapter.dispatch('ordered_string_agg')(value, separator, order_by, distinct, filter_where)) }}
{%- endmacro %}

{% macro default__ordered_string_agg(value, separator, order_by, distinct=false, filter_where=none) -%}
    string_agg({{ 'distinct ' if distinct }}{{ value }}, {{ separator }} order by {{ order_by }})
    {%- if filter_where is not none %} filter (where {{ filter_where }}){% endif -%}
{%- endmacro %}

{% macro spark__ordered_string_agg(value, separator, order_by, distinct=false, filter_where=none) -%}
    {%- set only = ' filter (where ' ~ filter_where ~ ')' if filter_where is not none else '' -%}
    {%- if distinct -%}
        {%- set values = 'array_sort(collect_set(' ~ value ~ ')' ~ only ~ ')' -%}
    {%- else -%}
        {%- set values = 'transform(array_sort(collect_list(struct(' ~ order_by ~ ' as sort_key, '
            ~ value ~ ' as value))' ~ only ~ '), item -> item.value)' -%}
    {%- endif -%}
    case when size({{ values }}) > 0 then array_join({{ values }}, {{ separator }}) end
{%- endmacro %}

{#- true when `text` matches `pattern` whole. -#}
{% macro regexp_full_match(text, pattern) -%}
    {{ return(adapter.dispatch('regexp_full_match')(text, pattern)) }}
{%- endmacro %}

{% macro default__regexp_full_match(text, pattern) -%}
    regexp_full_match({{ text }}, {{ pattern }})
{%- endmacro %}

{% macro spark__regexp_full_match(text, pattern) -%}
    regexp_like({{ text }}, concat('^(?:', {{ pattern }}, ')$'))
{%- endmacro %}

{#- A JSON text parsed (NULL when it is not JSON), and one string field of it. -#}
{% macro try_parse_json(text) -%}
    {{ return(adapter.dispatch('try_parse_json')(text)) }}
{%- endmacro %}

{% macro default__try_parse_json(text) -%}
    try_cast({{ text }} as json)
{%- endmacro %}

{#- Spark reads fields from the text itself (get_json_object is NULL on text that is not JSON). -#}
{% macro spark__try_parse_json(text) -%}
    {{ text }}
{%- endmacro %}

{% macro json_string_field(json, path) -%}
    {{ return(adapter.dispatch('json_string_field')(json, path)) }}
{%- endmacro %}

{% macro default__json_string_field(json, path) -%}
    json_extract_string({{ json }}, {{ path }})
{%- endmacro %}

{% macro spark__json_string_field(json, path) -%}
    get_json_object({{ json }}, {{ path }})
{%- endmacro %}

{#- A text to a UTC timestamp, NULL when it does not read as one. -#}
{% macro try_to_utc_timestamp(text) -%}
    {{ return(adapter.dispatch('try_to_utc_timestamp')(text)) }}
{%- endmacro %}

{% macro default__try_to_utc_timestamp(text) -%}
    try_cast({{ text }} as timestamptz)
{%- endmacro %}

{% macro spark__try_to_utc_timestamp(text) -%}
    try_to_timestamp({{ text }})
{%- endmacro %}

{#- One row per hour that [valid_from, valid_to) touches: the start of each such hour. -#}
{% macro hour_starts(valid_from, valid_to) -%}
    {{ return(adapter.dispatch('hour_starts')(valid_from, valid_to)) }}
{%- endmacro %}

{% macro default__hour_starts(valid_from, valid_to) -%}
    unnest(range(date_trunc('hour', {{ valid_from }}), {{ valid_to }}, interval 1 hour))
{%- endmacro %}

{#- Spark's sequence includes its end: stop one microsecond before valid_to. -#}
{% macro spark__hour_starts(valid_from, valid_to) -%}
    explode(
        sequence(
            date_trunc('hour', {{ valid_from }}),
            {{ valid_to }} - interval 1 microsecond,
            interval 1 hour
        )
    )
{%- endmacro %}

{#- One row per UTC day that [valid_from, valid_to) touches: the start (midnight) of each such day. -#}
{% macro day_starts(valid_from, valid_to) -%}
    {{ return(adapter.dispatch('day_starts')(valid_from, valid_to)) }}
{%- endmacro %}

{% macro default__day_starts(valid_from, valid_to) -%}
    unnest(range(date_trunc('day', {{ valid_from }}), {{ valid_to }}, interval 1 day))
{%- endmacro %}

{% macro spark__day_starts(valid_from, valid_to) -%}
    explode(
        sequence(
            date_trunc('day', {{ valid_from }}),
            {{ valid_to }} - interval 1 microsecond,
            interval 1 day
        )
    )
{%- endmacro %}

{#- `union all` of two selects matched by column name. -#}
{% macro union_all_by_name() -%}
    {{ return(adapter.dispatch('union_all_by_name')()) }}
{%- endmacro %}

{% macro default__union_all_by_name() -%}
    union all by name
{%- endmacro %}

{#- Spark SQL has no UNION BY NAME: the models that use this list both sides' columns in the
    same order. -#}
{% macro spark__union_all_by_name() -%}
    union all
{%- endmacro %}

{#-
    SPEC 4: the row of `relation` (e.g. FX rates) with the latest `right_column` on or before
    `left_value` among the rows `condition` matches (one row per `partition_by` and `right_column`).
    DuckDB: an ASOF join. Spark: each row valid until the next one of its partition.
-#}
{% macro asof_left_join(relation, alias, condition, left_value, right_column, partition_by) -%}
    {{ return(adapter.dispatch('asof_left_join')(relation, alias, condition, left_value, right_column, partition_by)) }}
{%- endmacro %}

{% macro default__asof_left_join(relation, alias, condition, left_value, right_column, partition_by) -%}
    asof left join {{ relation }} as {{ alias }}
        on {{ condition }}
        and {{ left_value }} >= {{ alias }}.{{ right_column }}
{%- endmacro %}

{% macro spark__asof_left_join(relation, alias, condition, left_value, right_column, partition_by) -%}
    left join (
        select
            *,
            lead({{ right_column }}) over (
                partition by {{ partition_by }} order by {{ right_column }}
            ) as asof_valid_until
        from {{ relation }}
    ) as {{ alias }}
        on {{ condition }}
        and {{ left_value }} >= {{ alias }}.{{ right_column }}
        and ({{ alias }}.asof_valid_until is null or {{ left_value }} < {{ alias }}.asof_valid_until)
{%- endmacro %}

{#- Every column of the warehouse: table_schema, table_name, column_name, data_type (upper case,
    e.g. DECIMAL(38,12)), numeric_scale. -#}
{% macro warehouse_columns() -%}
    {{ return(adapter.dispatch('warehouse_columns')()) }}
{%- endmacro %}

{% macro default__warehouse_columns() -%}
    select table_schema, table_name, column_name, data_type, numeric_scale
    from information_schema.columns
    where table_catalog = current_database()
{%- endmacro %}

{#- Spark has no information_schema: each project schema's `show table extended`, one statement
    per schema (describing each table instead was one statement per table: over a hundred on an
    incremental run), read from the `Schema: root` tree Spark prints last for every table and
    view (after a view's text, which may span lines). Its top-level lines are
    ` |-- <column>: <type> (nullable = ...)`; nested fields are indented further and are not
    columns. `show table extended` also lists the session's temporary views
    (an incremental run's `__dbt_tmp` ones, namespace ''): those are left out. -#}
{% macro spark__warehouse_columns() -%}
    {%- set rows = [] -%}
    {%- if execute -%}
        {%- set column_line = modules.re.compile('^ \\|-- (.+?): (.+?) \\(nullable = ', modules.re.M) -%}
        {%- for schema in ['raw', 'reference', 'staging', 'intermediate', 'marts'] -%}
            {%- for table in run_query("show table extended in " ~ schema ~ " like '*'").rows
                if table[0] == schema -%}
                {%- for column in column_line.findall(table[3].split('\nSchema: root\n')[-1]) -%}
                    {%- set kind = column[1] | upper -%}
                    {%- set scale = modules.re.search('^DECIMAL\\(\\d+, ?(\\d+)\\)', kind) -%}
                    {%- do rows.append("('" ~ schema ~ "', '" ~ table[1] ~ "', '" ~ column[0]
                        ~ "', '" ~ kind ~ "', " ~ (scale.group(1) if scale else 'null') ~ ")") -%}
                {%- endfor -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if rows -%}
    select * from values {{ rows | join(', ') }}
        as warehouse_columns(table_schema, table_name, column_name, data_type, numeric_scale)
    {%- else -%}
    select 'none' as table_schema, 'none' as table_name, 'none' as column_name,
        'NONE' as data_type, cast(null as int) as numeric_scale
    where false
    {%- endif -%}
{%- endmacro %}

{#- A JSON object text {"column": value, ...} of the columns, in order, NULLs kept as null. -#}
{% macro json_object_text(columns) -%}
    {{ return(adapter.dispatch('json_object_text')(columns)) }}
{%- endmacro %}

{% macro default__json_object_text(columns) -%}
    cast(json_object(
        {%- for column in columns %}
        '{{ column }}', {{ column }}{{ ',' if not loop.last }}
        {%- endfor %}
    ) as varchar)
{%- endmacro %}

{% macro spark__json_object_text(columns) -%}
    to_json(
        named_struct(
            {%- for column in columns %}
            '{{ column }}', {{ column }}{{ ',' if not loop.last }}
            {%- endfor %}
        ),
        map('ignoreNullFields', 'false')
    )
{%- endmacro %}

{#- Raises `message` (a string expression) as the query's error; typed as never returning. -#}
{% macro raise_error(message) -%}
    {{ return(adapter.dispatch('raise_error')(message)) }}
{%- endmacro %}

{% macro default__raise_error(message) -%}
    error({{ message }})
{%- endmacro %}

{% macro spark__raise_error(message) -%}
    raise_error({{ message }})
{%- endmacro %}

{#- The timestamp `ts` plus `minutes` (an integer) minutes. -#}
{% macro add_minutes(ts, minutes) -%}
    {{ return(adapter.dispatch('add_minutes')(ts, minutes)) }}
{%- endmacro %}

{% macro default__add_minutes(ts, minutes) -%}
    {{ ts }} + to_minutes({{ minutes }})
{%- endmacro %}

{% macro spark__add_minutes(ts, minutes) -%}
    timestampadd(minute, {{ minutes }}, {{ ts }})
{%- endmacro %}

{#- The list of the integers `start` to `stop`, both included. -#}
{% macro integer_range(start, stop) -%}
    {{ return(adapter.dispatch('integer_range')(start, stop)) }}
{%- endmacro %}

{% macro default__integer_range(start, stop) -%}
    range({{ start }}, {{ stop }} + 1)
{%- endmacro %}

{% macro spark__integer_range(start, stop) -%}
    sequence(cast({{ start }} as bigint), cast({{ stop }} as bigint))
{%- endmacro %}

{#- In a select list: one row per element of the list `values`. -#}
{% macro unnest_list(values) -%}
    {{ return(adapter.dispatch('unnest_list')(values)) }}
{%- endmacro %}

{% macro default__unnest_list(values) -%}
    unnest({{ values }})
{%- endmacro %}

{% macro spark__unnest_list(values) -%}
    explode({{ values }})
{%- endmacro %}

{#- The DOUBLE sum of `expression` over `variable` = `start` to `stop` (integers, both included). -#}
{% macro sum_over_integers(start, stop, variable, expression) -%}
    {{ return(adapter.dispatch('sum_over_integers')(start, stop, variable, expression)) }}
{%- endmacro %}

{% macro default__sum_over_integers(start, stop, variable, expression) -%}
    list_sum(list_transform(
            {{ integer_range(start, stop) }},
            lambda {{ variable }}: {{ expression }}
        ))
{%- endmacro %}

{% macro spark__sum_over_integers(start, stop, variable, expression) -%}
    aggregate({{ integer_range(start, stop) }}, cast(0 as double),
        (sum_so_far, {{ variable }}) -> sum_so_far + {{ expression }})
{%- endmacro %}

{#- ln(Gamma(x)) of an integer x >= 1, i.e. ln((x - 1)!). Spark has no lgamma: the sum of ln(k),
    k = 2 .. x - 1, in DOUBLE. -#}
{% macro log_gamma(x) -%}
    {{ return(adapter.dispatch('log_gamma')(x)) }}
{%- endmacro %}

{% macro default__log_gamma(x) -%}
    lgamma({{ x }})
{%- endmacro %}

{% macro spark__log_gamma(x) -%}
    aggregate(sequence(cast(1 as bigint), greatest(cast(({{ x }}) - 1 as bigint), 1)),
        cast(0 as double), (log_so_far, factor) -> log_so_far + ln(factor))
{%- endmacro %}
