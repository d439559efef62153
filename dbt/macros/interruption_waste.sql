{#-
    SPEC 5 interruption waste, priced, as CTEs a model embeds (one rule for every waste the ledger
    prices: what production wasted, and what a shadow candidate would have wasted, SPEC 11).

    `claims` names a CTE with one row per waste claim and the columns `source`, `event_id`,
    `session_id`, `tenant_id`, `occurred_at`, `turn_index`, `is_false_interruption`,
    `wasted_output_tokens`, `wasted_tts_characters`; `usage_lines` names a CTE of
    int_usage_lines_priced. The macro defines `<prefix>_output_usage`, `<prefix>_output_matches`,
    `<prefix>_tts_usage`, `<prefix>_tts_matches` and `<prefix>_priced`, one row per claim.

    Waste of a kind is priced at the unit price of the usage of that kind in the same session and
    turn (the latest, if several); with none in the turn, the latest in the session at or before
    the claim. With none at all, or that usage unpriced, the claim is unpriced (NULL, never 0).
-#}
{% macro interruption_waste_ctes(claims, usage_lines, prefix='waste') -%}
{%- set kinds = [
    {'name': 'output', 'meters': ['llm.output_tokens', 'realtime.output_audio_tokens'],
     'wasted': 'wasted_output_tokens'},
    {'name': 'tts', 'meters': ['tts.characters'], 'wasted': 'wasted_tts_characters'},
] -%}
{% for kind in kinds %}
{%- set usage = prefix ~ '_' ~ kind.name ~ '_usage' -%}
{%- set matches = prefix ~ '_' ~ kind.name ~ '_matches' -%}
{{ usage }} as (
    select
        session_id,
        turn_index,
        occurred_at,
        source,
        event_id,
        unit_price_reporting,
    from {{ usage_lines }}
    where meter in ('{{ kind.meters | join("', '") }}')
),

{{ matches }} as (
    select
        {{ claims }}.source as claim_source,
        {{ claims }}.event_id as claim_event_id,
        {{ usage }}.event_id as usage_event_id,
        {{ usage }}.source as usage_source,
        {{ usage }}.unit_price_reporting,
        case
            when {{ usage }}.turn_index = {{ claims }}.turn_index then 'same_turn'
            else 'session_fallback'
        end as match_rule,
    from {{ claims }}
    inner join {{ usage }}
        on {{ claims }}.session_id = {{ usage }}.session_id
        and (
            {{ usage }}.turn_index = {{ claims }}.turn_index
            or {{ usage }}.occurred_at <= {{ claims }}.occurred_at
        )
    qualify row_number() over (
        partition by {{ claims }}.source, {{ claims }}.event_id
        order by
            coalesce({{ usage }}.turn_index = {{ claims }}.turn_index, false) desc,
            {{ usage }}.occurred_at desc,
            {{ usage }}.source desc,
            {{ usage }}.event_id desc
    ) = 1
),

{% endfor -%}
{{ prefix }}_by_kind as (
    select
        {{ claims }}.event_id,
        {{ claims }}.source,
        {{ claims }}.session_id,
        {{ claims }}.tenant_id,
        {{ claims }}.occurred_at,
        {{ claims }}.turn_index,
        {{ claims }}.is_false_interruption,
        {%- for kind in kinds %}
        {%- set matches = prefix ~ '_' ~ kind.name ~ '_matches' %}
        {{ claims }}.{{ kind.wasted }},
        {{ matches }}.usage_event_id as {{ kind.name }}_usage_event_id,
        {{ matches }}.match_rule as {{ kind.name }}_match_rule,
        {{ matches }}.unit_price_reporting as {{ kind.name }}_unit_price_reporting,
        case
            when {{ claims }}.{{ kind.wasted }} = 0 then null
            when {{ matches }}.usage_event_id is null then 'no_{{ kind.name }}_usage'
            when {{ matches }}.unit_price_reporting is null
                then '{{ kind.name }}_usage_unpriced'
        end as {{ kind.name }}_unpriced_reason,
        case
            when {{ claims }}.{{ kind.wasted }} = 0 then {{ money(0) }}
            else {{ money(
                claims ~ '.' ~ kind.wasted ~ ' * '
                ~ matches ~ '.unit_price_reporting') }}
        end as {{ kind.name }}_waste_amount,
        {%- endfor %}
    from {{ claims }}
    {%- for kind in kinds %}
    {%- set matches = prefix ~ '_' ~ kind.name ~ '_matches' %}
    left join {{ matches }}
        on {{ claims }}.source = {{ matches }}.claim_source
        and {{ claims }}.event_id = {{ matches }}.claim_event_id
    {%- endfor %}
),

{{ prefix }}_priced as (
    select
        event_id,
        source,
        session_id,
        tenant_id,
        occurred_at,
        turn_index,
        is_false_interruption,
        wasted_output_tokens,
        output_usage_event_id,
        output_match_rule,
        output_unit_price_reporting,
        wasted_tts_characters,
        tts_usage_event_id,
        tts_match_rule,
        tts_unit_price_reporting,
        '{{ var("reporting_currency") }}' as currency,
        output_waste_amount,
        tts_waste_amount,
        coalesce(output_unpriced_reason, tts_unpriced_reason) is null as is_priced,
        coalesce(output_unpriced_reason, tts_unpriced_reason) as unpriced_reason,
        case
            when coalesce(output_unpriced_reason, tts_unpriced_reason) is null
                then output_waste_amount + tts_waste_amount
        end as waste_amount,
    from {{ prefix }}_by_kind
)
{%- endmacro %}
