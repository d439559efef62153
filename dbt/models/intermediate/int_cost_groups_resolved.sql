{{ config(materialized='incremental', unique_key='session_id') }}
with

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('session_id') }}
),

reported_costs as (
    select * from {{ ref('int_reported_costs_converted') }} {{ refresh_filter('session_id') }}
),

usage_groups as (
    select
        session_id,
        component,
        provider,
        sum(amount) as usage_amount,
        count(distinct source || chr(31) || event_id) filter (where not is_priced)
            as unpriced_usage_event_count,
    from usage_lines
    group by session_id, component, provider
),

-- A reported amount without an FX rate cannot stand in for anything: NULL, as if not reported;
-- such a report is held (SPEC 9) and counted where the group's cost waited on it.
reported_groups as (
    select
        session_id,
        component,
        provider,
        case when count(*) = count(amount) then sum(amount) end as reported_amount,
        count(*) - count(amount) as held_report_count,
    from reported_costs
    group by session_id, component, provider
),

groups as (
    select
        coalesce(usage_groups.session_id, reported_groups.session_id) as session_id,
        coalesce(usage_groups.component, reported_groups.component) as component,
        coalesce(usage_groups.provider, reported_groups.provider) as provider,
        usage_groups.session_id is not null as has_usage,
        usage_groups.usage_amount,
        coalesce(usage_groups.unpriced_usage_event_count, 0) as unpriced_usage_event_count,
        reported_groups.reported_amount,
        coalesce(reported_groups.held_report_count, 0) as held_report_count,
    from usage_groups
    full outer join reported_groups
        on usage_groups.session_id = reported_groups.session_id
        and usage_groups.component = reported_groups.component
        and usage_groups.provider = reported_groups.provider
),

-- SPEC 9, per session x component x provider: the priced usage when all of the group's usage is
-- priced; otherwise the reported amount when there is one (the group then counts as priced);
-- otherwise unpriced as in SPEC 5 (the priced lines only). Reported cost of a group with no
-- usage at all (a platform fee) is cost of its component.
resolved as (
    select
        *,
        case
            when has_usage and unpriced_usage_event_count = 0 then 'usage'
            when reported_amount is not null then 'reported'
            else 'unpriced'
        end as cost_source,
    from groups
),

final as (
    select
        session_id,
        component,
        provider,
        cost_source,
        usage_amount,
        reported_amount,
        {{ money(
            "case cost_source when 'reported' then reported_amount "
            ~ "else coalesce(usage_amount, 0) end") }} as cost,
        -- A held report whose group is unpriced counts as the unpriced usage it stood for, so
        -- that the session says its cost is incomplete (has_unpriced_usage).
        case
            when cost_source = 'unpriced' then unpriced_usage_event_count + held_report_count
            else 0
        end as unpriced_usage_event_count,
    from resolved
)

select * from final
