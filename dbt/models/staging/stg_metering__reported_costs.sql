with

events as (
    select * from {{ ref('stg_metering__events') }}
),

-- A later report of a cost line (session x component x provider x item) supersedes the earlier
-- ones (SPEC 9, `revision`, absent = 0): only the highest revision's rows count; a changed figure
-- is a restatement of the session.
reported as (
    select
        *,
        max(coalesce(revision, 0)) over (
            partition by session_id, component, provider, item
        ) as latest_revision,
    from events
    where event_type = 'cost.reported'
),

-- The contract keeps 6 places; the ledger's money is decimal(38, 12) from here on.
final as (
    select
        event_id,
        source,
        tenant_id,
        session_id,
        occurred_at,
        provider,
        component,
        model,
        turn_index,
        item,
        {{ money('amount') }} as amount,
        currency,
        -- Where it came from, so that a report the ledger cannot use is named by file and line.
        file_id,
        line_number,
    from reported
    where coalesce(revision, 0) = latest_revision
)

select * from final
