-- SPEC 13: each SLO's burn rate over both windows of each multi-window rule, and whether the rule
-- fires (both windows above its factor). Burn rate = bad share / (1 - objective): 1 spends the
-- error budget exactly over the SLO window, 14.4 spends 2% of a 30-day budget in an hour
-- (macros/slo.sql).
with

turn_segments as (
    select * from {{ ref('int_slo_turn_segments') }}
),

rules as (
    {%- for rule in var('burn_rate_rules') %}
    select
        '{{ rule.name }}' as rule_name,
        '{{ rule.severity }}' as severity,
        cast({{ rule.factor }} as double) as factor,
        cast({{ rule.long_seconds }} as bigint) as long_window_seconds,
        cast({{ rule.short_seconds }} as bigint) as short_window_seconds,
        {{ loop.index }} as rule_order
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),

windows as (
    select
        turn_segments.profile,
        turn_segments.tenant_id,
        turn_segments.segment,
        rules.rule_name,
        min(turn_segments.segment_order) as segment_order,
        min(turn_segments.owner) as owner,
        min(turn_segments.objective) as objective,
        min(turn_segments.evaluated_at) as evaluated_at,
        min(rules.severity) as severity,
        min(rules.factor) as factor,
        min(rules.rule_order) as rule_order,
        min(rules.long_window_seconds) as long_window_seconds,
        min(rules.short_window_seconds) as short_window_seconds,
        {%- for window in ['long', 'short'] %}
        count(*) filter (
            where turn_segments.age_us < rules.{{ window }}_window_seconds * 1000000
        ) as {{ window }}_turns,
        count(*) filter (
            where turn_segments.age_us < rules.{{ window }}_window_seconds * 1000000
            and turn_segments.is_bad
        ) as {{ window }}_bad_turns,
        {%- endfor %}
    from turn_segments
    cross join rules
    group by
        turn_segments.profile, turn_segments.tenant_id, turn_segments.segment, rules.rule_name
),

burned as (
    select
        *,
        {{ burn_rate('long_bad_turns', 'long_turns', 'objective') }} as long_burn_rate,
        {{ burn_rate('short_bad_turns', 'short_turns', 'objective') }} as short_burn_rate,
    from windows
),

final as (
    select
        profile,
        tenant_id,
        segment,
        segment_order,
        owner,
        objective,
        rule_name,
        rule_order,
        severity,
        factor,
        long_window_seconds,
        short_window_seconds,
        evaluated_at,
        long_turns,
        long_bad_turns,
        long_burn_rate,
        short_turns,
        short_bad_turns,
        short_burn_rate,
        coalesce(long_burn_rate > factor and short_burn_rate > factor, false) as is_firing,
    from burned
)

select * from final
