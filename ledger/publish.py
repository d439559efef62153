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

# The one schema readers may name: everything people see is computed in a mart (the boards, the
# alerts, the weekly review and the export read nothing else), so nothing else is published.
PUBLISHED_SCHEMA = "marts"


@dataclass(frozen=True)
class PublishResult:
    path: str
    tables: int
    published_at: datetime


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    found = con.execute(
        "select table_name from information_schema.tables where table_catalog = 'warehouse' "
        "and table_schema = ? and table_type in ('BASE TABLE', 'VIEW') order by 1",
        [PUBLISHED_SCHEMA],
    ).fetchall()
    return [f"{PUBLISHED_SCHEMA}.{name}" for (name,) in found]


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
        if settings.engine == "spark":
            from ledger.spark import marts_selects

            selects = marts_selects(con, settings)
        else:
            selects = {table: f"select * from warehouse.{table}" for table in _tables(con)}
        tables = list(selects)
        try:
            con.execute(f"create schema published.{PUBLISHED_SCHEMA}")
            for table, select in selects.items():
                con.execute(f"create table published.{table} as {select}")
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
