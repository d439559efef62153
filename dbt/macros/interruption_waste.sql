{#-
    SPEC 5 interruption waste, priced, as CTEs a model embeds (one rule for every waste the ledger
    prices: what production wasted, and what a shadow candidate would have wasted, SPEC 11).

    `claims` names a CTE with one row per waste claim and the columns `source`, `event_id`,
    `session_id`, `tenant_id`, `occurred_at`, `turn_index`, `is_false_interruption`,
    `wasted_output_tokens`, `wasted_tts_characters`; `usage_lines` names a CTE of
    int_usage_lines_priced. The macro defines `<prefix>_usage`, `<prefix>_matches`,
    `<prefix>_matched`, `<prefix>_by_kind` and `<prefix>_priced`, one row per claim.

    Waste of a kind is priced at the unit price of the usage of that kind in the same session and
    turn (the latest, if several); with none in the turn, the latest in the session at or before
    the claim. With none at all, or that usage unpriced, the claim is unpriced (NULL, never 0).

    Each of `claims` and `usage_lines` is read once, both kinds in one join: Spark inlines a CTE
    at each reference, so a claims CTE read three times would be computed three times.
-#}
{% macro interruption_waste_ctes(claims, usage_lines, prefix='waste') -%}
{%- set kinds = [
    {'name': 'output', 'meters': ['llm.output_tokens', 'realtime.output_audio_tokens'],
     'wasted': 'wasted_output_tokens'},
    {'name': 'tts', 'meters': ['tts.characters'], 'wasted': 'wasted_tts_characters'},
] -%}
{#- What a claim is, then what it claims of each kind. -#}
{%- set claim_keys = ['event_id', 'source', 'session_id', 'tenant_id', 'occurred_at',
    'turn_index', 'is_false_interruption'] -%}
{%- set claim_columns = claim_keys + (kinds | map(attribute='wasted') | list) -%}
{%- set usage = prefix ~ '_usage' -%}
{%- set matches = prefix ~ '_matches' -%}
{{ usage }} as (
    select
        session_id,
        turn_index,
        occurred_at,
        source,
        event_id,
        unit_price_reporting,
        case
            {%- for kind in kinds %}
            when meter in ('{{ kind.meters | join("', '") }}') then '{{ kind.name }}'
            {%- endfor %}
        end as usage_kind,
    from {{ usage_lines }}
    where meter in (
        {%- for kind in kinds %}'{{ kind.meters | join("', '") }}'{{ ', ' if not loop.last }}{% endfor -%}
    )
),

-- Every claim, with its best usage of each kind (a claim without any usage keeps one row).
{{ matches }} as (
    select
        {%- for column in claim_columns %}
        {{ claims }}.{{ column }},
        {%- endfor %}
        {{ usage }}.usage_kind,
        {{ usage }}.event_id as usage_event_id,
        {{ usage }}.unit_price_reporting,
        case
            when {{ usage }}.turn_index = {{ claims }}.turn_index then 'same_turn'
            else 'session_fallback'
        end as match_rule,
    from {{ claims }}
    left join {{ usage }}
        on {{ claims }}.session_id = {{ usage }}.session_id
        and (
            {{ usage }}.turn_index = {{ claims }}.turn_index
            or {{ usage }}.occurred_at <= {{ claims }}.occurred_at
        )
    qualify row_number() over (
        partition by {{ claims }}.source, {{ claims }}.event_id, {{ usage }}.usage_kind
        order by
            coalesce({{ usage }}.turn_index = {{ claims }}.turn_index, false) desc,
            {{ usage }}.occurred_at desc,
            {{ usage }}.source desc,
            {{ usage }}.event_id desc
    ) = 1
),

{{ prefix }}_matched as (
    select
        {%- for column in claim_columns %}
        {{ column }},
        {%- endfor %}
        {%- for kind in kinds %}
        max(case when usage_kind = '{{ kind.name }}' then usage_event_id end)
            as {{ kind.name }}_usage_event_id,
        max(case when usage_kind = '{{ kind.name }}' then match_rule end)
            as {{ kind.name }}_match_rule,
        max(case when usage_kind = '{{ kind.name }}' then unit_price_reporting end)
            as {{ kind.name }}_unit_price_reporting,
        {%- endfor %}
    from {{ matches }}
    group by {{ claim_columns | join(', ') }}
),

{{ prefix }}_by_kind as (
    select
        {%- for column in claim_keys %}
        {{ column }},
        {%- endfor %}
        {%- for kind in kinds %}
        {{ kind.wasted }},
        {{ kind.name }}_usage_event_id,
        {{ kind.name }}_match_rule,
        {{ kind.name }}_unit_price_reporting,
        case
            when {{ kind.wasted }} = 0 then null
            when {{ kind.name }}_usage_event_id is null then 'no_{{ kind.name }}_usage'
            when {{ kind.name }}_unit_price_reporting is null
                then '{{ kind.name }}_usage_unpriced'
        end as {{ kind.name }}_unpriced_reason,
        case
            when {{ kind.wasted }} = 0 then {{ money(0) }}
            else {{ money(kind.wasted ~ ' * ' ~ kind.name ~ '_unit_price_reporting') }}
        end as {{ kind.name }}_waste_amount,
        {%- endfor %}
    from {{ prefix }}_matched
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
