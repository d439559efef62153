-- Reported to Dagster as a check on fct_session_ledger (the test reads several models).
{{ config(meta={"dagster": {"ref": {"name": "fct_session_ledger"}}}) }}
-- Every session of the raw events has exactly one ledger row, and the ledger invents none.
with

events as (
    select * from {{ refresh_events_relation(
        source('raw', 'events'), source('ops', 'refresh_events')
    ) }}
),

session_ledger as (
    select * from {{ ref('fct_session_ledger') }} {{ refresh_filter('session_id') }}
),

raw_sessions as (
    select distinct session_id
    from events
),

ledger_rows as (
    select
        session_id,
        count(*) as row_count,
    from session_ledger
    group by session_id
),

final as (
    select
        coalesce(raw_sessions.session_id, ledger_rows.session_id) as session_id,
        raw_sessions.session_id is not null as in_raw_events,
        coalesce(ledger_rows.row_count, 0) as ledger_row_count,
    from raw_sessions
    full outer join ledger_rows
        on raw_sessions.session_id = ledger_rows.session_id
    where raw_sessions.session_id is null or ledger_rows.row_count is distinct from 1
)

select * from final
