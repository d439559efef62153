{{ config(materialized='incremental', unique_key='session_id') }}
{#- `ledger replay` writes its copies under the recorded source suffixed with this (SPEC 11;
    ledger.simulate.replay.REPLAY_SUFFIX). -#}
{%- set replay_suffix = '-replay' -%}
with

events as (
    select * from {{ ref('stg_metering__events') }}
),

session_starts as (
    select * from {{ ref('stg_metering__session_starts') }}
),

session_ends as (
    select * from {{ ref('stg_metering__session_ends') }}
),

-- The clock of the 2-hour rule is the data, not the wall clock: replaying old files gives the
-- same ledger.
newest_event as (
    {{ newest_event_at_relation('events') }}
),

first_events as (
    select
        session_id,
        tenant_id,
        occurred_at as first_event_at,
    from events
    qualify row_number() over (
        partition by session_id order by occurred_at, source, event_id
    ) = 1
),

session_activity as (
    select
        session_id,
        max(occurred_at) as last_event_at,
        count(*) as event_count,
        count(distinct turn_index) as turn_count,
        -- A replayed copy (SPEC 11): every event of it comes from a `-replay` source.
        bool_and(source like '%{{ replay_suffix }}') as is_replay,
    from events
    group by session_id
),

-- A repeated start or end (two emitters) counts once: the earliest wins.
first_starts as (
    select *
    from session_starts
    qualify row_number() over (
        partition by session_id order by occurred_at, source, event_id
    ) = 1
),

first_ends as (
    select *
    from session_ends
    qualify row_number() over (
        partition by session_id order by occurred_at, source, event_id
    ) = 1
),

joined as (
    select
        first_events.session_id,
        coalesce(first_starts.tenant_id, first_events.tenant_id) as tenant_id,
        coalesce(first_starts.scenario, 'unknown') as scenario,
        coalesce(first_starts.pipeline, 'unknown') as pipeline,
        coalesce(first_starts.channel, 'unknown') as channel,
        first_starts.session_id is not null as has_start,
        coalesce(first_starts.occurred_at, first_events.first_event_at) as started_at,
        first_ends.occurred_at as end_event_at,
        first_ends.end_reason as end_event_reason,
        session_activity.last_event_at,
        session_activity.event_count,
        session_activity.turn_count,
        session_activity.is_replay,
        newest_event.newest_event_at,
    from first_events
    inner join session_activity
        on first_events.session_id = session_activity.session_id
    left join first_starts
        on first_events.session_id = first_starts.session_id
    left join first_ends
        on first_events.session_id = first_ends.session_id
    cross join newest_event
),

closed as (
    select
        *,
        case
            when end_event_at is not null then 'ended'
            when last_event_at
                < newest_event_at - interval {{ var('missing_end_after_hours') }} hour
                then 'missing_end'
            else 'open'
        end as lifecycle_state,
    from joined
),

final as (
    select
        session_id,
        tenant_id,
        scenario,
        pipeline,
        channel,
        started_at,
        case lifecycle_state
            when 'ended' then end_event_at
            when 'missing_end' then last_event_at
        end as ended_at,
        case lifecycle_state
            when 'ended' then end_event_reason
            when 'missing_end' then 'missing_end'
        end as end_reason,
        lifecycle_state = 'open' as is_open,
        has_start,
        is_replay,
        {{ to_business_date('started_at') }} as business_date,
        {{ iso_week_label(to_business_date('started_at')) }} as iso_week,
        {{ iso_week_start(to_business_date('started_at')) }} as week_start_date,
        case lifecycle_state
            when 'ended' then {{ microseconds_to_seconds(
                'epoch_us(end_event_at) - epoch_us(started_at)') }}
            when 'missing_end' then {{ microseconds_to_seconds(
                'epoch_us(last_event_at) - epoch_us(started_at)') }}
        end as duration_seconds,
        last_event_at,
        event_count,
        turn_count,
    from closed
)

select * from final
