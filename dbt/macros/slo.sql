{#- SPEC 13: an SLO window's figures, said once. `objective` is DECIMAL(5,4), so the error budget
    (1 - objective) x turns is exact and round figures stay round; shares and burn rates are DOUBLE
    (latency is not money). -#}

{#- The bad turns the objective allows in the window (exact). -#}
{% macro error_budget_turns(objective, turns) -%}
    cast((1 - {{ objective }}) * {{ turns }} as decimal(38, 4))
{%- endmacro %}

{#- Burn rate = bad share / (1 - objective) = bad / error budget; NULL without turns. -#}
{% macro burn_rate(bad_turns, turns, objective) -%}
    {{ budget_burn_rate(bad_turns, turns, error_budget_turns(objective, turns)) }}
{%- endmacro %}

{#- The same from the error budget itself: a sum of SLOs with different objectives (an owner
    team's) has one budget, the sum of theirs, and no one objective. -#}
{% macro budget_burn_rate(bad_turns, turns, budget_turns) -%}
    case
        when {{ turns }} > 0
            then cast({{ bad_turns }} as double) / cast({{ budget_turns }} as double)
    end
{%- endmacro %}

{#- SLI, error budget and what remains of it (1 - bad / error budget, negative once overspent). -#}
{% macro slo_figures(turns, bad_turns, objective) -%}
    {{ budget_slo_figures(turns, bad_turns, error_budget_turns(objective, turns)) }}
{%- endmacro %}

{% macro budget_slo_figures(turns, bad_turns, budget_turns) -%}
    cast({{ turns }} - {{ bad_turns }} as double) / {{ turns }} as sli,
    {{ budget_turns }} as error_budget_turns,
    1 - {{ budget_burn_rate(bad_turns, turns, budget_turns) }} as error_budget_remaining
{%- endmacro %}
