{{ config(materialized='incremental', unique_key='session_id') }}
{%- set reporting_currency = var('reporting_currency') -%}

with

sessions as (
    select * from {{ ref('int_sessions_resolved') }} {{ refresh_filter('session_id') }}
),

price_plans as (
    select * from {{ ref('stg_reference__price_plans') }}
),

fx_rates as (
    select * from {{ ref('stg_reference__fx_rates') }}
),

-- SPEC 4: the plan in effect at the session's start (windows half-open).
with_plan as (
    select
        sessions.session_id,
        sessions.tenant_id,
        sessions.started_at,
        sessions.is_open,
        sessions.is_replay,
        sessions.duration_seconds,
        cast(sessions.started_at as date) as start_date_utc,
        price_plans.price_plan_line_number,
        price_plans.per_session_fee,
        price_plans.price_per_second,
        price_plans.billing_increment_seconds,
        price_plans.currency as plan_currency,
    from sessions
    left join price_plans
        on sessions.tenant_id = price_plans.tenant_id
        and sessions.started_at >= price_plans.effective_from
        and (price_plans.effective_to is null or sessions.started_at < price_plans.effective_to)
),

-- A plan in another currency converts at the latest rate on or before the start's UTC date.
with_fx as (
    select
        with_plan.*,
        case
            when with_plan.plan_currency = '{{ reporting_currency }}'
                then cast(1 as decimal(38, 12))
            else plan_fx.fx_rate
        end as plan_fx_rate,
    from with_plan
    {{ asof_left_join('fx_rates', 'plan_fx', 'with_plan.plan_currency = plan_fx.currency',
        'with_plan.start_date_utc', 'rate_date', 'currency') }}
),

billable as (
    select
        *,
        -- A replayed copy is load, never revenue (SPEC 11): its revenue is zero, whatever its plan.
        case
            when is_replay then 'replay'
            when is_open then 'open'
            when price_plan_line_number is null then 'no_price_plan'
            when plan_fx_rate is null then 'no_fx_rate'
            else 'billed'
        end as revenue_status,
        case
            when not is_open and price_plan_line_number is not null
                then cast({{ billable_seconds(
                    'greatest(cast(duration_seconds * 1000000 as bigint), 0)',
                    'billing_increment_seconds') }} as bigint)
        end as billable_seconds,
    from with_fx
),

final as (
    select
        session_id,
        tenant_id,
        revenue_status,
        price_plan_line_number,
        plan_currency,
        plan_fx_rate,
        billing_increment_seconds,
        billable_seconds,
        {{ seconds_to_minutes('billable_seconds') }} as billable_minutes,
        case
            when revenue_status = 'replay' then {{ money(0) }}
            when revenue_status = 'billed'
                then {{ money(
                    '(per_session_fee + billable_seconds * price_per_second) * plan_fx_rate') }}
        end as revenue,
    from billable
)

select * from final
