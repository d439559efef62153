"""The published copy: a read-only DuckDB file of the marts that the boards read.

DuckDB lets one process write a database file; a board reading the warehouse itself would either
block the pipeline or fail on its lock. So after each successful build the pipeline copies what the
boards need into a new file and renames it over the published one. A rename is atomic: a reader
sees the old copy or the new one, never a half-built state, and a reader with the old file open
keeps reading it undisturbed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb

from ledger.settings import Settings

# Tables copied besides every table of the `marts` schema. A view (staging) is copied as a table
# of its rows: the published file holds no raw events for it to read from.
EXTRA_TABLES = (
    "intermediate.int_usage_lines_priced",
    # The boards filter experience by scenario and pipeline, and the session explorer lists each
    # session's interruptions and degradations: both need these per-session / per-event rows.
    "intermediate.int_session_experience_aggregated",
    "intermediate.int_interruption_waste_priced",
    "staging.stg_metering__session_degradations",
    "raw.quarantine",
    "raw.ingested_files",
    "reference.latency_budgets",
    "reference.meta",
)


@dataclass(frozen=True)
class PublishResult:
    path: str
    tables: int
    published_at: datetime


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    found = con.execute(
        "select table_schema, table_name from information_schema.tables "
        "where table_catalog = 'warehouse' and table_type in ('BASE TABLE', 'VIEW') order by 1, 2"
    ).fetchall()
    marts = [f"{schema}.{name}" for schema, name in found if schema == "marts"]
    existing = {f"{schema}.{name}" for schema, name in found}
    return marts + [t for t in EXTRA_TABLES if t in existing]


def publish(settings: Settings) -> PublishResult:
    """Copy the marts into a fresh file and atomically replace the published copy with it."""
    target = settings.published_path
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    staging.unlink(missing_ok=True)
    published_at = datetime.now(UTC).replace(tzinfo=None)
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach '{settings.warehouse_path}' as warehouse (read_only)")
        con.execute(f"attach '{staging}' as published")
        tables = _tables(con)
        try:
            for schema in sorted({t.split(".")[0] for t in tables}):
                con.execute(f"create schema published.{schema}")
            for table in tables:
                con.execute(f"create table published.{table} as select * from warehouse.{table}")
            newest = con.execute(
                "select max(occurred_at), count(*) from warehouse.raw.events"
            ).fetchone()
            con.execute(
                "create table published.main.publication as select "
                "cast(? as timestamp) as published_at, cast(? as timestamp) as newest_event_at, "
                "cast(? as bigint) as events, cast(? as varchar) as reporting_currency, "
                "cast(? as varchar) as timezone",
                [
                    published_at,
                    newest[0],
                    newest[1],
                    settings.reporting_currency,
                    settings.timezone,
                ],
            )
        finally:
            con.execute("detach published")
            con.execute("detach warehouse")
    os.replace(staging, target)
    return PublishResult(str(target), len(tables), published_at)
