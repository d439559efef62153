-- SPEC 4: an amount converts at the FX rate of the latest date on or before its UTC date. Usage
-- or revenue dated before a currency's first FX rate would otherwise stay unpriced without a word
-- (reason `no_fx_rate`). This test stops the build instead, naming the currency, the dates to
-- cover and the first rate there is; the published copy stays as it was. A reported cost without
-- a rate is not checked here: it is held and shown by its event and file (SPEC 9,
-- fct_reported_costs_held), since one platform's report must not stop every tenant's build.
-- It raises (`raise_error`: DuckDB `error()`) rather than returning rows so that the message itself reaches
-- the terminal of `ledger build`. Fix: add rates to fx_rates.csv dated on or before the first
-- date named, then `ledger build` again.
with

usage_lines as (
    select
        'usage' as what,
        rate_currency as currency,
        usage_date as uncovered_date,
    from {{ ref('int_usage_lines_priced') }}
    where unpriced_reason = 'no_fx_rate'
),

revenue as (
    select
        'revenue' as what,
        billed.plan_currency as currency,
        cast(sessions.started_at as date) as uncovered_date,
    from {{ ref('int_sessions_billed') }} as billed
    inner join {{ ref('int_sessions_resolved') }} as sessions
        on billed.session_id = sessions.session_id
    where billed.revenue_status = 'no_fx_rate'
),

uncovered as (
    select * from usage_lines
    union all
    select * from revenue
),

first_rates as (
    select
        currency,
        min(rate_date) as first_rate_date,
    from {{ ref('stg_reference__fx_rates') }}
    group by currency
),

per_currency as (
    select
        uncovered.currency,
        min(uncovered.uncovered_date) as first_date,
        max(uncovered.uncovered_date) as last_date,
        {{ ordered_string_agg('uncovered.what', "', '", 'uncovered.what', distinct=true) }} as what,
        count(*) as lines,
        any_value(first_rates.first_rate_date) as first_rate_date,
    from uncovered
    left join first_rates
        on uncovered.currency = first_rates.currency
    group by uncovered.currency
),

message as (
    select
        'FX rates do not cover the amounts they convert: '
        || {{ ordered_string_agg(
            "currency || ' ' || what || ' dated ' || cast(first_date as varchar)
            || ' to ' || cast(last_date as varchar) || ' (UTC, ' || lines || ' lines) '
            || coalesce(
                'precede the first ' || currency || ' rate in fx_rates.csv, '
                || cast(first_rate_date as varchar),
                'have no ' || currency || ' rate in fx_rates.csv'
            )",
            "'; '",
            'currency'
        ) }}
        || '. Add rates dated on or before those dates to fx_rates.csv, then `ledger build`.'
            as text,
    from per_currency
    having count(*) > 0
)

-- In the filter, so that no optimisation of dbt's wrapping `count(*)` can leave it out.
select text as fx_coverage
from message
where {{ raise_error('text') }} is not null
