{{ config(materialized='incremental', unique_key='session_id') }}
{#-
    SPEC 11: one row per turn and shadow candidate, over the turns that have both a production
    endpointing segment and a `turn.shadow` of the candidate: what production did and what the
    candidate would have done on the same turn.
-#}
with

shadows as (
    select * from {{ ref('stg_metering__turn_shadows') }}
),

turn_segments as (
    select * from {{ ref('int_turn_segments_budgeted') }} {{ refresh_filter('session_id') }}
),

interruption_waste as (
    select * from {{ ref('int_interruption_waste_priced') }} {{ refresh_filter('session_id') }}
),

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('session_id') }}
),

-- An emitter may report a candidate's decision twice: the latest report stands.
shadow_decisions as (
    select *
    from shadows
    qualify row_number() over (
        partition by session_id, turn_index, candidate
        order by occurred_at desc, source desc, event_id desc
    ) = 1
),

production_turns as (
    select
        session_id,
        turn_index,
        tenant_id,
        scenario,
        business_date,
        iso_week,
        week_start_date,
        max(duration_ms) filter (where segment = 'endpointing') as production_endpointing_ms,
        max(duration_ms) filter (where segment = 'first_audio') as production_first_audio_ms,
    from turn_segments
    -- Recorded turns only: a replayed copy (SPEC 11) repeats its original's shadow decisions.
    where not is_replay
    group by all
    having production_endpointing_ms is not null
),

production_interruptions as (
    select
        session_id,
        turn_index,
        bool_or(is_false_interruption) as is_false_interruption,
        bool_and(is_priced) as is_priced,
        sum(waste_amount) as waste_amount,
    from interruption_waste
    group by session_id, turn_index
),

-- What the turn generated: all of it is what a candidate's interruption would have cut off.
turn_output as (
    select
        session_id,
        turn_index,
        cast(sum(quantity) filter (
            where meter in ('llm.output_tokens', 'realtime.output_audio_tokens')
        ) as bigint) as output_tokens,
        cast(sum(quantity) filter (where meter = 'tts.characters') as bigint) as tts_characters,
    from usage_lines
    where turn_index is not null
    group by session_id, turn_index
),

compared as (
    select
        production_turns.*,
        shadow_decisions.candidate,
        shadow_decisions.kind,
        shadow_decisions.source,
        shadow_decisions.event_id,
        shadow_decisions.occurred_at,
        cast(shadow_decisions.endpointing_ms as decimal(18, 3)) as candidate_endpointing_ms,
        production_interruptions.session_id is not null as is_production_interrupted,
        coalesce(production_interruptions.is_false_interruption, false)
            as is_production_false_interruption,
        production_interruptions.is_priced as is_production_waste_priced,
        production_interruptions.waste_amount as production_waste_amount,
        shadow_decisions.would_interrupt as is_candidate_interrupted,
        shadow_decisions.would_interrupt
        and coalesce(shadow_decisions.is_false_interruption, false)
            as is_candidate_false_interruption,
        coalesce(turn_output.output_tokens, 0) as turn_output_tokens,
        coalesce(turn_output.tts_characters, 0) as turn_tts_characters,
    from shadow_decisions
    inner join production_turns
        on shadow_decisions.session_id = production_turns.session_id
        and shadow_decisions.turn_index = production_turns.turn_index
    left join production_interruptions
        on shadow_decisions.session_id = production_interruptions.session_id
        and shadow_decisions.turn_index = production_interruptions.turn_index
    left join turn_output
        on shadow_decisions.session_id = turn_output.session_id
        and shadow_decisions.turn_index = turn_output.turn_index
),

-- The waste a candidate would add: it interrupts a turn production let play out, and everything
-- the turn generated goes unheard (an upper bound: production's own waste is what was unheard).
candidate_claims as (
    select
        source,
        event_id,
        session_id,
        tenant_id,
        occurred_at,
        turn_index,
        is_candidate_false_interruption as is_false_interruption,
        turn_output_tokens as wasted_output_tokens,
        turn_tts_characters as wasted_tts_characters,
    from compared
    where is_candidate_interrupted and not is_production_interrupted
),

-- Priced by the one rule of SPEC 5, at the turn's own rates.
{{ interruption_waste_ctes('candidate_claims', 'usage_lines', prefix='candidate_waste') }},

final as (
    select
        compared.session_id,
        compared.turn_index,
        compared.tenant_id,
        compared.scenario,
        compared.business_date,
        compared.iso_week,
        compared.week_start_date,
        compared.candidate,
        compared.kind,
        compared.production_endpointing_ms,
        compared.candidate_endpointing_ms,
        -- Integer microseconds: the verdict's interval test is exact on these (see shadow_comparison).
        cast(
            (compared.candidate_endpointing_ms - compared.production_endpointing_ms) * 1000
            as bigint
        )
            as endpointing_delta_us,
        compared.production_first_audio_ms,
        compared.production_first_audio_ms - compared.production_endpointing_ms
        + compared.candidate_endpointing_ms as candidate_first_audio_ms,
        compared.is_production_interrupted,
        compared.is_production_false_interruption,
        compared.is_candidate_interrupted,
        compared.is_candidate_false_interruption,
        cast(compared.is_candidate_false_interruption as integer)
        - cast(compared.is_production_false_interruption as integer) as false_interruption_delta,
        '{{ var("reporting_currency") }}' as currency,
        -- Production's waste on a turn the candidate would have let play out: avoided.
        case
            when compared.is_production_interrupted and not compared.is_candidate_interrupted
                then compared.production_waste_amount
            else {{ money(0) }}
        end as waste_avoided_cost,
        case
            when compared.is_candidate_interrupted and not compared.is_production_interrupted
                then candidate_waste_priced.waste_amount
            else {{ money(0) }}
        end as waste_added_cost,
        (
            compared.is_production_interrupted
            and not compared.is_candidate_interrupted
            and not compared.is_production_waste_priced
        )
        or coalesce(not candidate_waste_priced.is_priced, false) as has_unpriced_waste,
    from compared
    left join candidate_waste_priced
        on compared.source = candidate_waste_priced.source
        and compared.event_id = candidate_waste_priced.event_id
)

select * from final
