"""Creating the raw layer, and migrating a warehouse from before the Parquet layer."""

from __future__ import annotations

from pathlib import Path

import duckdb

from ledger.contract.fields import raw_event_columns
from ledger.warehouse.event_files import land_events
from ledger.warehouse.raw_layout import (
    ADDED_EVENT_COLUMNS,
    EVENT_FILE_COLUMNS,
    EVENT_KEY_COLUMNS,
    INGESTED_FILE_COLUMNS,
    QUARANTINE_COLUMNS,
    ddl,
    events_relation_kind,
    refresh_events_view,
)


def ensure_raw_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the raw layer if missing: the events' Parquet manifest and keys, the quarantine and
    the manifest of ingested files; `raw.events` is a view over the manifest's Parquet files.

    A warehouse whose raw.events is still a table (before the Parquet layer) is migrated: its
    rows are written to Parquet and the table becomes the view, in one transaction.
    """
    con.execute("create schema if not exists raw")
    con.execute(ddl("raw.quarantine", QUARANTINE_COLUMNS))
    con.execute(ddl("raw.ingested_files", INGESTED_FILE_COLUMNS))
    con.execute(ddl("raw.event_files", EVENT_FILE_COLUMNS))
    con.execute(ddl("raw.event_keys", EVENT_KEY_COLUMNS))
    con.execute("create sequence if not exists raw.file_id_seq start 1")
    kind = events_relation_kind(con)
    if kind == "BASE TABLE":
        _migrate_events_table(con)
    else:
        # Also for an existing view: it names its files by absolute path, so a home that moved
        # reads its own files again from here on.
        refresh_events_view(con)


def _migrate_events_table(con: duckdb.DuckDBPyConnection) -> None:
    """raw.events as a table -> its rows in Parquet files, the table replaced by the view."""
    present = {
        name
        for (name,) in con.execute(
            "select column_name from duckdb_columns() where database_name = current_database() "
            "and schema_name = 'raw' and table_name = 'events'"
        ).fetchall()
    }
    con.execute("begin transaction")
    written: list[Path] = []
    try:
        for name, kind in raw_event_columns():
            if name not in present:
                con.execute(f"alter table raw.events add column {name} {kind}")
                if name in ADDED_EVENT_COLUMNS:
                    con.execute(f"update raw.events set {name} = {ADDED_EVENT_COLUMNS[name]}")
        written = land_events(con, "raw.events", file_id=None, batch_id="migrated", refresh=False)
        con.execute("drop table raw.events")
        refresh_events_view(con)
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        for path in written:
            path.unlink(missing_ok=True)
        raise
