"""The data quality page: quarantined rows (redacted in the mart), unpriced usage, reported costs
held for want of an FX rate, ingested files and the reference data in effect."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run
from dashboards.queries.common import cached, session_filter
from ledger.serving.freshness import DATA_LAG_BY_SOURCE_SQL

if TYPE_CHECKING:
    from dashboards.filters import Filters


@cached
def quarantine_by_reason(version: str) -> pd.DataFrame:
    sql = """
        select reason, count(*) as rows, count(distinct file) as files
        from marts.fct_quarantined_rows
        group by reason
        order by rows desc, reason
    """
    return run(version, sql)


@cached
def quarantine_by_file(version: str) -> pd.DataFrame:
    sql = """
        select file as source_file, reason, count(*) as rows, min(line) as first_line
        from marts.fct_quarantined_rows
        group by file, reason
        order by file, rows desc, reason
    """
    return run(version, sql)


@cached
def unpriced_usage(version: str, filters: Filters) -> pd.DataFrame:
    """Usage lines with no price in effect, grouped by what is missing from the rate card."""
    where, params = session_filter(filters, alias="sessions")
    sql = f"""
        select
            lines.component, lines.provider, lines.model, lines.meter, lines.unpriced_reason,
            count(*) as lines,
            sum(lines.quantity) as quantity,
            count(distinct lines.session_id) as sessions,
            min(lines.occurred_at) as first_at,
            max(lines.occurred_at) as last_at
        from marts.fct_usage_lines as lines
        inner join marts.fct_session_ledger as sessions
            on lines.session_id = sessions.session_id
        where not lines.is_priced and {where}
        group by all
        order by lines desc, lines.component, lines.provider, lines.model, lines.meter
    """
    return run(version, sql, params)


@cached
def held_reported_costs(version: str, filters: Filters) -> pd.DataFrame:
    """Reported costs held for want of an FX rate (SPEC 9), each named by its event and file."""
    where, params = session_filter(filters, alias="sessions")
    sql = f"""
        select
            held.event_id, held.source, held.file, held.line, held.tenant_id, held.session_id,
            held.component, held.provider, held.reported_amount, held.reported_currency,
            held.reported_date
        from marts.fct_reported_costs_held as held
        inner join marts.fct_session_ledger as sessions
            on held.session_id = sessions.session_id
        where {where}
        order by held.reported_date, held.source, held.event_id
    """
    return run(version, sql, params)


@cached
def unpriced_interruptions(version: str, filters: Filters) -> pd.DataFrame:
    where, params = session_filter(filters, alias="sessions")
    sql = f"""
        select waste.unpriced_reason, count(*) as interruptions
        from marts.fct_interruptions as waste
        inner join marts.fct_session_ledger as sessions
            on waste.session_id = sessions.session_id
        where not waste.is_priced and {where}
        group by all
        order by interruptions desc, waste.unpriced_reason
    """
    return run(version, sql, params)


@cached
def ingested_files(version: str) -> pd.DataFrame:
    sql = """
        select path, rows, accepted, duplicates, quarantined, ingested_at
        from marts.fct_ingested_files
        order by ingested_at desc, path
    """
    return run(version, sql)


@cached
def data_lag_by_source(version: str) -> pd.DataFrame:
    """Per source: its newest batch in the published copy, when the collector accepted it, and
    the lag to the publication (ledger/serving/freshness.py)."""
    return run(version, DATA_LAG_BY_SOURCE_SQL)


@cached
def reference_meta(version: str) -> pd.DataFrame:
    return run(version, "select * from marts.dim_reference_meta")
