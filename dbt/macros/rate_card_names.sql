{#-
    SPEC 4: the provider and model a line names, resolved to the rate card's names before anything
    is matched or grouped by them, so that an alias re-prices and a reported cost meets its usage's
    group whatever its spelling (SPEC 9). The one rule for every line that names a provider: usage
    lines (int_usage_lines_priced), reported costs (int_reported_costs_converted) and billed costs
    (int_billed_costs_converted). ledger.reference.ReferenceData.resolve_name says it in Python for
    `ledger rates`.

    (1) The provider: its alias, else the rate card's spelling, else as seen.
    (2) LiveKit Inference: a gateway provider (var inference_gateways) whose model reads
        `provider/model[:option]` is that provider, resolved as in (1), and that model.
    (3) The model: its alias for that provider, else the rate card's spelling, else as seen (NULL
        stays NULL: a reported cost need not name one).

    Emits CTEs, the last one named `named`: every column of `lines` (which has `provider` and
    `model`) plus `named_provider` and `named_model`. The others are prefixed with `named`, so that
    one model can name two sets of lines.
-#}
{% macro rate_card_names(lines, named) -%}
{{ named }}_provider_aliases as (
    select * from {{ ref('stg_reference__provider_aliases') }}
),

{{ named }}_model_aliases as (
    select * from {{ ref('stg_reference__model_aliases') }}
),

-- Names match case-insensitively; the loader refuses two spellings of one name.
{{ named }}_card_providers as (
    select
        lower(provider) as provider_key,
        min(provider) as provider,
    from {{ ref('stg_reference__rate_card') }}
    group by lower(provider)
),

{{ named }}_card_models as (
    select
        provider,
        lower(model) as model_key,
        min(model) as model,
    from {{ ref('stg_reference__rate_card') }}
    group by provider, lower(model)
),

{{ named }}_outer as (
    select
        lines.*,
        coalesce(aliases.provider, card.provider, lines.provider) as outer_provider,
    from {{ lines }} as lines
    left join {{ named }}_provider_aliases as aliases on lower(lines.provider) = aliases.seen_key
    left join {{ named }}_card_providers as card on lower(lines.provider) = card.provider_key
),

{{ named }}_gateway_split as (
    select
        *,
        case
            when
                lower(outer_provider)
                -- the rendered list of gateways is as long as the var makes it
                in ('{{ var("inference_gateways") | join("', '") }}')  -- noqa: LT05
                and instr(model, '/') > 0
                then split_part(model, '/', 1)
        end as inner_provider,
    from {{ named }}_outer
),

{{ named }}_providers as (
    select
        gateway_lines.*,
        case
            when gateway_lines.inner_provider is null then gateway_lines.outer_provider
            else coalesce(
                inner_aliases.provider, inner_card.provider, gateway_lines.inner_provider
            )
        end as named_provider,
        case
            when gateway_lines.inner_provider is null then gateway_lines.model
            else split_part(
                substring(gateway_lines.model, instr(gateway_lines.model, '/') + 1), ':', 1
            )
        end as provider_model,
    from {{ named }}_gateway_split as gateway_lines
    left join {{ named }}_provider_aliases as inner_aliases
        on lower(gateway_lines.inner_provider) = inner_aliases.seen_key
    left join {{ named }}_card_providers as inner_card
        on lower(gateway_lines.inner_provider) = inner_card.provider_key
),

{{ named }} as (
    select
        providers.*,
        coalesce(model_aliases.model, card_models.model, providers.provider_model) as named_model,
    from {{ named }}_providers as providers
    left join {{ named }}_model_aliases as model_aliases
        on providers.named_provider = model_aliases.provider
        and lower(providers.provider_model) = model_aliases.seen_key
    left join {{ named }}_card_models as card_models
        on providers.named_provider = card_models.provider
        and lower(providers.provider_model) = card_models.model_key
)
{%- endmacro %}
