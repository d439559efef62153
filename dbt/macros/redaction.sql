{#-
    A sample of untrusted text that is safe to show people: e-mail addresses and runs of four or
    more digits (phone, card, account numbers; timestamps too) are masked, then the text is cut to
    `max_length` characters. The raw text itself never leaves the raw layer.
-#}
{% macro redacted_sample(expression, max_length=120) -%}
    {{ return(adapter.dispatch('redacted_sample')(expression, max_length)) }}
{%- endmacro %}

{#- Spark's regexp_replace replaces every match (its 4th argument is a position, not flags). -#}
{% macro spark__redacted_sample(expression, max_length=120) -%}
    left(
        regexp_replace(
            regexp_replace(
                {{ expression }},
                '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}', '<email>'
            ),
            '[0-9]{4,}', '<digits>'
        ),
        {{ max_length }}
    )
{%- endmacro %}

{% macro default__redacted_sample(expression, max_length=120) -%}
    left(
        regexp_replace(
            regexp_replace(
                {{ expression }},
                '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}', '<email>', 'g'
            ),
            '[0-9]{4,}', '<digits>', 'g'
        ),
        {{ max_length }}
    )
{%- endmacro %}
