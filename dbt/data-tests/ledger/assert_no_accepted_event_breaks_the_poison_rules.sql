-- SPEC 3: poison events are quarantined at ingest, never fatal. A warehouse ingested before those
-- rules can still hold such an event: a session under a second tenant (`session_tenant_conflict`
-- now) or an `occurred_at` before 2000-01-01 (`bad_value` now). Further on they fail the build
-- (FOCUS charges no longer unique) or the publish (no ISO week for year 1) naming no event; this
-- test stops the build first, naming each event (source, event id, file, line, the first ten)
-- and the command that removes them: `ledger recover` ingests the landing files again, in their
-- first order, under today's rules, which quarantine them. It raises (`raise_error`) so that the
-- message itself reaches the terminal of `ledger build`.
-- A refresh checks the refreshed sessions; the first build after an upgrade is a full one (the
-- project changed), which checks every event.
with

events as (
    select
        source,
        event_id,
        tenant_id,
        session_id,
        occurred_at,
        {%- if target.name == 'spark' %}
        -- Spark types a raw column by the first file it reads, and `file_id` was written 32-bit in
        -- some files and 64-bit in others: Spark names the events without their file and line.
        cast(null as bigint) as file_id,
        cast(null as bigint) as line_number,
        {%- else %}
        file_id,
        line_number,
        {%- endif %}
    from {{ source('raw', 'events') }}
    {{ refresh_filter('session_id') }}
),

files as (
    select
        file_id,
        path,
    from {{ source('raw', 'ingested_files') }}
),

shared_sessions as (
    select session_id
    from events
    group by session_id
    having count(distinct tenant_id) > 1
),

shared_events as (
    select
        events.*,
        -- The ingest's order: the first event of a session (by file, then line) owns it.
        row_number() over (
            partition by events.session_id
            order by events.file_id nulls first, events.line_number nulls first, events.tenant_id
        ) as rank_in_session,
    from events
    inner join shared_sessions
        on events.session_id = shared_sessions.session_id
),

owners as (
    select
        session_id,
        tenant_id,
    from shared_events
    where rank_in_session = 1
),

poison as (
    select
        'session_tenant_conflict' as rule_broken,
        shared_events.source,
        shared_events.event_id,
        shared_events.file_id,
        shared_events.line_number,
    from shared_events
    inner join owners
        on shared_events.session_id = owners.session_id
    where shared_events.tenant_id <> owners.tenant_id
    union all
    select
        'occurred_at before 2000-01-01' as rule_broken,
        source,
        event_id,
        file_id,
        line_number,
    from events
    where occurred_at < cast('2000-01-01 00:00:00' as timestamp)
),

named as (
    select
        poison.rule_broken,
        poison.source,
        poison.event_id,
        poison.line_number,
        coalesce(files.path, 'no landing file') as path,
        row_number() over (
            order by files.path nulls last, poison.line_number, poison.source, poison.event_id
        ) as place,
    from poison
    left join files
        on poison.file_id = files.file_id
),

message as (
    select
        cast(count(*) as varchar)
        || ' accepted events break rules the ingest applies now: '
        || {{ ordered_string_agg(
            "rule_broken || ': source ' || source || ', event ' || event_id || ', '
            || path || ' line ' || coalesce(cast(line_number as varchar), '?')",
            "'; '",
            'place',
            filter_where='place <= 10'
        ) }}
        || '. Run `ledger recover`: it ingests the landing files again under these rules, '
        || 'which quarantine them; then `ledger build`.'
            as text,
    from named
    having count(*) > 0
)

-- In the filter, so that no optimisation of dbt's wrapping `count(*)` can leave it out.
select text as poison_events
from message
where {{ raise_error('text') }} is not null
