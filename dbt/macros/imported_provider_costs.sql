{#-
    The provider invoice / usage rows imported with `ledger reconcile import` (table
    imports.provider_costs, written by ledger.finops.provider_costs). The table exists only once
    something was imported: until then this is an empty relation of the same columns, so a
    warehouse that never imported a bill builds the same models.
-#}
{% macro imported_provider_costs() -%}
    {%- set relation = adapter.get_relation(
        database=target.database, schema='imports', identifier='provider_costs') -%}
    {%- if relation is not none -%}
    select
        file_name,
        line_number,
        usage_date,
        provider,
        component,
        model,
        item,
        amount,
        currency,
    from {{ relation }}
    {%- else -%}
    select
        cast(null as varchar) as file_name,
        cast(null as integer) as line_number,
        cast(null as date) as usage_date,
        cast(null as varchar) as provider,
        cast(null as varchar) as component,
        cast(null as varchar) as model,
        cast(null as varchar) as item,
        cast(null as decimal(38, 12)) as amount,
        cast(null as varchar) as currency,
    where false
    {%- endif -%}
{%- endmacro %}
