{#-
    Exact arithmetic. In DuckDB `DECIMAL / anything` returns DOUBLE, so nothing here uses `/`:
    quantities are multiplied by unit prices computed exactly in Python (reference data), and the
    few divisions the ledger needs (seconds to minutes, margin %) are done on scaled HUGEINTs with
    `//` and an explicit rounding rule.

    Rounding rule of the whole ledger (mirrored by tests/test_ledger_dbt.py with decimal.Decimal,
    ROUND_HALF_UP): every rounding is a DuckDB DECIMAL cast, which rounds half away from zero.
      - a unit price in the reporting currency: unit_price(price_in_rate_currency * fx_rate), 20 places
      - a line amount: money(quantity * unit price in the reporting currency), 12 places
    Session and mart totals sum unrounded-further line amounts (12 places): no rounding after that.
-#}

{% macro money(expression) -%}
    cast({{ expression }} as decimal(38, 12))
{%- endmacro %}

{% macro unit_price(expression) -%}
    cast({{ expression }} as decimal(38, 20))
{%- endmacro %}

{#- Integer microseconds -> DECIMAL(18, 6) seconds, exact (a timestamp has microsecond resolution). -#}
{% macro microseconds_to_seconds(microseconds) -%}
    cast(cast({{ microseconds }} as decimal(38, 0)) * 0.000001 as decimal(18, 6))
{%- endmacro %}

{#- Integer microseconds -> DECIMAL(18, 3) milliseconds, exact. -#}
{% macro microseconds_to_milliseconds(microseconds) -%}
    cast(cast({{ microseconds }} as decimal(38, 0)) * 0.001 as decimal(18, 3))
{%- endmacro %}

{#-
    SPEC 4: ceil(duration_seconds / increment) x increment, on integer microseconds so that no
    duration is rounded before the ceiling is taken. BIGINT seconds; a duration of 0 bills 0.
-#}
{% macro billable_seconds(duration_microseconds, increment_seconds) -%}
    {{ integer_divide(
        "cast(" ~ duration_microseconds ~ " as hugeint) + cast(" ~ increment_seconds
        ~ " as hugeint) * 1000000 - 1",
        "cast(" ~ increment_seconds ~ " as hugeint) * 1000000"
    ) }} * cast({{ increment_seconds }} as bigint)
{%- endmacro %}

{#-
    `numerator / denominator` x multiplier as DECIMAL(38, scale), rounded half away from zero;
    NULL when either operand is NULL or the denominator is 0. Operands are DECIMAL(38, 12) or
    integers with at most 14 integer digits: both are scaled to integers of 1e-12 units, and the
    magnitudes are divided with `//` on HUGEINT (round half up: (2n + d) // 2d), the sign put back.
-#}
{% macro decimal_ratio(numerator, denominator, scale=6, multiplier=1) -%}
    {%- set n = "cast(cast(" ~ numerator ~ " as decimal(38, 12)) * 1000000000000 as hugeint)" -%}
    {%- set d = "cast(cast(" ~ denominator ~ " as decimal(38, 12)) * 1000000000000 as hugeint)" -%}
    case
        when ({{ denominator }}) is null or ({{ denominator }}) = 0 or ({{ numerator }}) is null
            then null
        else cast(
            case when ({{ n }} < 0) = ({{ d }} < 0) then 1 else -1 end
            * {{ integer_divide(
                "abs(" ~ n ~ ") * " ~ (multiplier * (10 ** scale) * 2) ~ " + abs(" ~ d ~ ")",
                "2 * abs(" ~ d ~ ")"
            ) }} as decimal(38, 0)
        ) * {{ decimal_unit(scale) }}
    end
{%- endmacro %}

{%- macro decimal_unit(scale) -%}
    {%- if scale == 0 -%}1{%- else -%}0.{{ '0' * (scale - 1) }}1{%- endif -%}
{%- endmacro %}

{#- SPEC 5: gross_margin_pct = 100 x margin / revenue, DECIMAL(38, 6); NULL when revenue is 0 or NULL. -#}
{% macro percentage(numerator, denominator) -%}
    cast({{ decimal_ratio(numerator, denominator, scale=6, multiplier=100) }} as decimal(38, 6))
{%- endmacro %}

{#- billable_minutes = billable_seconds / 60, DECIMAL(38, 12), rounded half away from zero. -#}
{% macro seconds_to_minutes(seconds) -%}
    cast({{ decimal_ratio(seconds, 60, scale=12) }} as decimal(38, 12))
{%- endmacro %}

{#-
    floor(a / b) of integers a >= 0, b > 0, exact. DuckDB: `//` on HUGEINT. Spark has no exact
    integer division of wide decimals (`div` returns a BIGINT that wraps): a - a % b is a multiple
    of b, so dividing it is exact at any scale (DECIMAL(38, 0) / DECIMAL(38, 0) is DECIMAL(38, 18):
    quotients up to 10^20).
-#}
{% macro integer_divide(a, b) -%}
    {{ return(adapter.dispatch('integer_divide')(a, b)) }}
{%- endmacro %}

{% macro default__integer_divide(a, b) -%}
    (({{ a }}) // ({{ b }}))
{%- endmacro %}

{% macro spark__integer_divide(a, b) -%}
    cast((({{ a }}) - ({{ a }}) % ({{ b }})) / ({{ b }}) as decimal(38, 0))
{%- endmacro %}
