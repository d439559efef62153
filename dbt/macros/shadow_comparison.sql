{#-
    SPEC 11: the shadow comparison of one grain ('day' or 'week'), per tenant, scenario and
    candidate, read from int_shadow_turns_compared. The daily and weekly marts are this macro.

    Verdict. Each compared turn gives two paired differences, candidate minus production: its
    endpointing (in microseconds) and its false interruption (1, 0 or -1). For each, the mean
    difference has a 95% confidence interval by the normal approximation (mean +/- 1.96 x the
    sample standard deviation / sqrt(n)). A difference is significant when the interval excludes
    0, i.e. when mean^2 > 1.96^2 x var / n; that test is done exactly on integer sums
    (10000 x S1^2 x (n - 1) > 38416 x (n x S2 - S1^2), S1 = sum of differences, S2 = sum of
    squares), so a verdict never flips on a float's last bit. The interval itself is shown as DOUBLE.
      - `insufficient`: fewer compared turns than `shadow_min_turns` (default 200);
      - `keep`: the candidate is significantly worse on either measure, or better on neither;
      - `switch`: significantly better on at least one and significantly worse on neither.
-#}
{% macro shadow_comparison(grain) -%}
{%- set calendar = ['business_date'] if grain == 'day' else ['iso_week', 'week_start_date'] -%}
{%- set min_turns = var('shadow_min_turns', 200) | int -%}
with

turns as (
    select * from {{ ref('int_shadow_turns_compared') }}
),

aggregated as (
    select
        tenant_id,
        scenario,
        candidate,
        kind,
        {%- for column in calendar %}
        {{ column }},
        {%- endfor %}
        count(*) as compared_turns,
        round(quantile_cont(cast(production_endpointing_ms as double), 0.5), 3)
            as production_endpointing_p50_ms,
        round(quantile_cont(cast(production_endpointing_ms as double), 0.95), 3)
            as production_endpointing_p95_ms,
        round(quantile_cont(cast(candidate_endpointing_ms as double), 0.5), 3)
            as candidate_endpointing_p50_ms,
        round(quantile_cont(cast(candidate_endpointing_ms as double), 0.95), 3)
            as candidate_endpointing_p95_ms,
        count(production_first_audio_ms) as first_audio_turns,
        round(quantile_cont(cast(production_first_audio_ms as double), 0.95), 3)
            as production_first_audio_p95_ms,
        round(quantile_cont(cast(candidate_first_audio_ms as double), 0.95), 3)
            as candidate_first_audio_p95_ms,
        count(*) filter (where is_production_interrupted) as production_interruptions,
        count(*) filter (where is_production_false_interruption)
            as production_false_interruptions,
        count(*) filter (where is_candidate_interrupted) as candidate_interruptions,
        count(*) filter (where is_candidate_false_interruption) as candidate_false_interruptions,
        any_value(currency) as currency,
        {{ money('coalesce(sum(waste_avoided_cost), 0)') }} as waste_avoided_cost,
        {{ money('coalesce(sum(waste_added_cost), 0)') }} as waste_added_cost,
        count(*) filter (where has_unpriced_waste) as unpriced_waste_turns,
        cast(sum(endpointing_delta_us) as hugeint) as endpointing_delta_sum_us,
        cast(sum(cast(endpointing_delta_us as hugeint) * endpointing_delta_us) as hugeint)
            as endpointing_delta_sum_sq_us,
        cast(sum(false_interruption_delta) as hugeint) as false_interruption_delta_sum,
        cast(sum(false_interruption_delta * false_interruption_delta) as hugeint)
            as false_interruption_delta_sum_sq,
    from turns
    group by all
),

tested as (
    select
        *,
        {{ shadow_significance('endpointing_delta_sum_us', 'endpointing_delta_sum_sq_us') }}
            as endpointing_significance,
        {{ shadow_significance('false_interruption_delta_sum', 'false_interruption_delta_sum_sq') }}
            as false_interruption_significance,
    from aggregated
),

final as (
    select
        tenant_id,
        scenario,
        candidate,
        kind,
        {%- for column in calendar %}
        {{ column }},
        {%- endfor %}
        compared_turns,
        production_endpointing_p50_ms,
        candidate_endpointing_p50_ms,
        production_endpointing_p95_ms,
        candidate_endpointing_p95_ms,
        first_audio_turns,
        production_first_audio_p95_ms,
        candidate_first_audio_p95_ms,
        production_interruptions,
        production_false_interruptions,
        production_false_interruptions / nullif(production_interruptions, 0)
            as production_false_interruption_rate,
        candidate_interruptions,
        candidate_false_interruptions,
        candidate_false_interruptions / nullif(candidate_interruptions, 0)
            as candidate_false_interruption_rate,
        currency,
        waste_avoided_cost,
        waste_added_cost,
        {{ money('waste_added_cost - waste_avoided_cost') }} as waste_net_cost,
        unpriced_waste_turns,
        endpointing_delta_sum_us,
        endpointing_delta_sum_sq_us,
        {{ shadow_interval('endpointing_delta_sum_us', 'endpointing_delta_sum_sq_us', 0.001) }},
        false_interruption_delta_sum,
        false_interruption_delta_sum_sq,
        {{ shadow_interval('false_interruption_delta_sum', 'false_interruption_delta_sum_sq', 1,
            'false_interruption_delta') }},
        endpointing_significance,
        false_interruption_significance,
        {{ min_turns }} as min_turns,
        case
            when compared_turns < {{ min_turns }} then 'insufficient'
            when endpointing_significance = 'worse' or false_interruption_significance = 'worse'
                then 'keep'
            when endpointing_significance = 'better' or false_interruption_significance = 'better'
                then 'switch'
            else 'keep'
        end as verdict,
    from tested
)

select * from final
{%- endmacro %}

{#- 'better' (interval below 0), 'worse' (above 0) or 'unclear', exact on HUGEINT sums. -#}
{% macro shadow_significance(sum, sum_sq, n='compared_turns') -%}
    case
        when {{ n }} < 2 or {{ sum }} = 0 then 'unclear'
        when 10000 * {{ sum }} * {{ sum }} * ({{ n }} - 1)
            > 38416 * ({{ n }} * {{ sum_sq }} - {{ sum }} * {{ sum }})
            then case when {{ sum }} < 0 then 'better' else 'worse' end
        else 'unclear'
    end
{%- endmacro %}

{#-
    Mean and 95% normal-approximation interval of a paired difference, scaled by `unit`
    (microseconds to ms: 0.001). DOUBLE, rounded to 6 places: a statistic, not money.
-#}
{% macro shadow_interval(sum, sum_sq, unit, name='endpointing_delta') -%}
    {%- set suffix = '_ms' if name == 'endpointing_delta' else '' -%}
    {%- set mean = 'cast(' ~ sum ~ ' as double) / compared_turns' -%}
    {%- set half = '1.96 * sqrt(cast(compared_turns * ' ~ sum_sq ~ ' - ' ~ sum ~ ' * ' ~ sum
        ~ ' as double) / (compared_turns - 1)) / compared_turns' -%}
    round({{ mean }} * {{ unit }}, 6) as {{ name }}_mean{{ suffix }},
        case when compared_turns >= 2 then round(({{ mean }} - {{ half }}) * {{ unit }}, 6) end
            as {{ name }}_ci_low{{ suffix }},
        case when compared_turns >= 2 then round(({{ mean }} + {{ half }}) * {{ unit }}, 6) end
            as {{ name }}_ci_high{{ suffix }}
{%- endmacro %}
