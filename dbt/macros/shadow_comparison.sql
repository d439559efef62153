{#-
    SPEC 11: the shadow comparison of one grain ('day' or 'week'), per tenant, scenario and
    candidate, read from int_shadow_turns_compared. The daily and weekly marts are this macro.

    Verdict: exact tests, no approximation. Each compared turn gives two paired comparisons,
    candidate against production: its endpointing (faster, slower or the same) and its false
    interruption (avoided, added or the same). For each, the exact two-sided sign test (for the
    false interruptions this is McNemar's exact test): with b turns better and w worse (ties
    dropped), p = min(1, 2 x P(X <= min(b, w))), X ~ Binomial(b + w, 1/2). A measure is `better`
    or `worse` when p < 0.05 (a binomial tail is a multiple of 1/2^n, never exactly 0.05).
      - `insufficient`: fewer compared turns than `shadow_min_turns` (default 200);
      - `keep`: the candidate is significantly worse on either measure, or better on neither;
      - `switch`: significantly better on at least one and significantly worse on neither.
    The interval behind the endpointing verdict: the distribution-free 95% confidence interval of
    the median endpointing change, [d(k), d(n+1-k)] of the n sorted changes, k the largest rank
    with P(X <= k - 1) <= 0.025, X ~ Binomial(n, 1/2) (coverage >= 95%; none below 6 turns).
    Binomial probabilities are sums of exp(lgamma) terms in DOUBLE, rounded to 6 places when shown.
-#}
{% macro shadow_comparison(grain) -%}
{%- set calendar = ['business_date'] if grain == 'day' else ['iso_week', 'week_start_date'] -%}
{%- set min_turns = var('shadow_min_turns', 200) | int -%}
{%- set keys = ['tenant_id', 'scenario', 'candidate', 'kind'] + calendar -%}
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
        count(*) filter (where endpointing_delta_us < 0) as endpointing_faster_turns,
        count(*) filter (where endpointing_delta_us > 0) as endpointing_slower_turns,
        round(avg(endpointing_delta_us) / 1000, 6) as endpointing_delta_mean_ms,
        round(quantile_cont(endpointing_delta_us, 0.5) / 1000, 6) as endpointing_delta_median_ms,
        count(*) filter (where false_interruption_delta < 0) as false_interruptions_avoided,
        count(*) filter (where false_interruption_delta > 0) as false_interruptions_added,
    from turns
    group by all
),

-- The median interval's rank k: the cumulative Binomial(n, 1/2) up to j = k - 1 <= 0.025.
binomial as (
    select
        {{ keys | join(', ') }},
        j,
        sum({{ binomial_pmf('compared_turns', 'j') }}) over (
            partition by {{ keys | join(', ') }} order by j
        ) as cdf,
    from (
        select *, {{ unnest_list(integer_range(0, integer_divide('compared_turns', 2))) }} as j
        from aggregated
    )
),

interval_ranks as (
    select
        {{ keys | join(', ') }},
        max(j) + 1 as k,
    from binomial
    where cdf <= 0.025
    group by all
),

ranked_deltas as (
    select
        {{ keys | join(', ') }},
        endpointing_delta_us,
        row_number() over (
            partition by {{ keys | join(', ') }} order by endpointing_delta_us
        ) as delta_rank,
    from turns
),

median_intervals as (
    select
        {%- for key in keys %}
        aggregated.{{ key }},
        {%- endfor %}
        round(min(ranked_deltas.endpointing_delta_us) / 1000, 6) as endpointing_delta_ci_low_ms,
        round(max(ranked_deltas.endpointing_delta_us) / 1000, 6) as endpointing_delta_ci_high_ms,
    from aggregated
    join interval_ranks
        using ({{ keys | join(', ') }})
    join ranked_deltas
        using ({{ keys | join(', ') }})
    where ranked_deltas.delta_rank in (interval_ranks.k, aggregated.compared_turns + 1 - interval_ranks.k)
    group by all
),

tested as (
    select
        aggregated.*,
        median_intervals.endpointing_delta_ci_low_ms,
        median_intervals.endpointing_delta_ci_high_ms,
        {{ sign_test_p('endpointing_faster_turns', 'endpointing_slower_turns') }}
            as endpointing_p_value,
        {{ sign_test_p('false_interruptions_avoided', 'false_interruptions_added') }}
            as false_interruption_p_value,
    from aggregated
    left join median_intervals
        using ({{ keys | join(', ') }})
),

significant as (
    select
        *,
        {{ shadow_significance('endpointing_p_value', 'endpointing_faster_turns',
            'endpointing_slower_turns') }} as endpointing_significance,
        {{ shadow_significance('false_interruption_p_value', 'false_interruptions_avoided',
            'false_interruptions_added') }} as false_interruption_significance,
    from tested
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
        endpointing_faster_turns,
        endpointing_slower_turns,
        endpointing_delta_mean_ms,
        endpointing_delta_median_ms,
        endpointing_delta_ci_low_ms,
        endpointing_delta_ci_high_ms,
        round(endpointing_p_value, 6) as endpointing_p_value,
        false_interruptions_avoided,
        false_interruptions_added,
        round(false_interruption_p_value, 6) as false_interruption_p_value,
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
    from significant
)

select * from final
{%- endmacro %}

{#- P(X = j), X ~ Binomial(n, 1/2). -#}
{% macro binomial_pmf(n, j) -%}
    exp({{ log_gamma(n ~ ' + 1') }} - {{ log_gamma(j ~ ' + 1') }} - {{ log_gamma(n ~ ' - ' ~ j ~ ' + 1') }} - {{ n }} * ln(2))
{%- endmacro %}

{#- The exact two-sided sign test of `better` against `worse` turns (ties dropped). -#}
{% macro sign_test_p(better, worse) -%}
    least(
        1.0,
        2 * {{ sum_over_integers(
            '0', 'least(' ~ better ~ ', ' ~ worse ~ ')', 'i',
            binomial_pmf('(' ~ better ~ ' + ' ~ worse ~ ')', 'i')
        ) }}
    )
{%- endmacro %}

{#- 'better' or 'worse' when the sign test rejects "as often better as worse" at 5%. -#}
{% macro shadow_significance(p_value, better, worse) -%}
    case
        when {{ p_value }} < 0.05 and {{ better }} > {{ worse }} then 'better'
        when {{ p_value }} < 0.05 and {{ worse }} > {{ better }} then 'worse'
        else 'unclear'
    end
{%- endmacro %}
