{#- Custom schemas are used as given (`staging`, `intermediate`, `marts`), not prefixed with the
    target schema, so other code can name `marts.fct_session_ledger` without knowing the target. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
