"""The raw layer's shape: its tables' columns, where its Parquet files live, and the view
`raw.events` over exactly the files its manifest lists."""

from __future__ import annotations

from pathlib import Path

import duckdb

from ledger.contract.fields import raw_event_columns
from ledger.core.sql import literal

QUARANTINE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("file_id", "BIGINT"),
    ("source_file", "VARCHAR"),
    ("line_number", "BIGINT"),
    ("reason", "VARCHAR"),
    ("detail", "VARCHAR"),
    ("raw_text", "VARCHAR"),
    ("source", "VARCHAR"),
    ("event_id", "VARCHAR"),
    ("quarantined_at", "TIMESTAMP"),
)

INGESTED_FILE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("file_id", "BIGINT"),
    ("path", "VARCHAR"),
    ("content_sha256", "VARCHAR"),
    ("size_bytes", "BIGINT"),
    ("rows", "BIGINT"),
    ("accepted", "BIGINT"),
    ("duplicates", "BIGINT"),
    ("quarantined", "BIGINT"),
    ("ingested_at", "TIMESTAMP"),
    ("duration_ms", "BIGINT"),
)


def ddl(table: str, columns: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> str:
    body = ",\n  ".join(f"{name} {kind}" for name, kind in columns)
    return f"create table if not exists {table} (\n  {body}\n)"


# raw.events.key_hash: how an event's deduplication key is hashed (the ingest looks earlier
# versions of a key up by it).
KEY_HASH = "hash(source, event_id)"
# Columns raw.events gained after warehouses were first created, and how to fill them in (a
# field of a newer contract version is NULL on every older event).
ADDED_EVENT_COLUMNS = {"key_hash": KEY_HASH}


# The manifest of the Parquet files that hold raw.events: a file not listed here does not exist.
EVENT_FILE_COLUMNS: tuple[tuple[str, str], ...] = (
    (
        "path",
        "VARCHAR",
    ),  # relative to the raw root, e.g. events/event_date=2026-11-01/<batch>-0.parquet
    ("batch_id", "VARCHAR"),
    ("file_id", "BIGINT"),  # raw.ingested_files.file_id (NULL: migrated or appended directly)
    ("event_date", "DATE"),
    ("rows", "BIGINT"),
    ("min_occurred_at", "TIMESTAMP"),
    ("max_occurred_at", "TIMESTAMP"),
    ("committed_at", "TIMESTAMP"),
)
# The deduplication keys of every accepted event (the ingest looks earlier versions up here).
EVENT_KEY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "VARCHAR"),
    ("event_id", "VARCHAR"),
    ("key_hash", "UBIGINT"),
    ("payload_hash", "UBIGINT"),
    ("file_id", "BIGINT"),
    ("line_number", "BIGINT"),
    ("batch_id", "VARCHAR"),
)

# The tenant each session belongs to: the first accepted event of the session decides, and a later
# event of the session under another tenant is quarantined as `session_tenant_conflict` (SPEC 3).
# One row per session, written with the events (`land_events`); the ingest looks a session up by
# its hash, as it looks a key up in raw.event_keys.
SESSION_TENANT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("session_id", "VARCHAR"),
    ("tenant_id", "VARCHAR"),
    ("session_hash", "UBIGINT"),
    ("file_id", "BIGINT"),  # where the session's tenant was first seen (NULL: migrated)
    ("line_number", "BIGINT"),
)
SESSION_HASH = "hash(session_id)"


def raw_root(con: duckdb.DuckDBPyConnection) -> Path:
    """Where the Parquet files of this warehouse's raw layer live.

    `<home>/raw` for the warehouse `<home>/warehouse.duckdb`; `<file>.raw` beside any other
    database file (a recovery's new warehouse, a bench copy), so two never share files.
    """
    [(path,)] = con.execute(
        "select path from duckdb_databases() where database_name = current_database()"
    ).fetchall()
    if not path:
        raise ValueError("the raw layer needs a database file (not an in-memory database)")
    database = Path(path).resolve()
    if database.name == "warehouse.duckdb":
        return database.parent / "raw"
    return database.with_name(database.name + ".raw")


def events_relation_kind(con: duckdb.DuckDBPyConnection) -> str | None:
    rows = con.execute(
        "select table_type from information_schema.tables where table_catalog = current_database() "
        "and table_schema = 'raw' and table_name = 'events'"
    ).fetchall()
    return rows[0][0] if rows else None


def _event_columns_sql() -> str:
    return ", ".join(f"cast({name} as {kind}) as {name}" for name, kind in raw_event_columns())


def refresh_events_view(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)define raw.events over exactly the Parquet files in raw.event_files."""
    root = raw_root(con)
    paths = [
        str(root / path)
        for (path,) in con.execute("select path from raw.event_files order by path").fetchall()
    ]
    if paths:
        listed = "[" + ", ".join(literal(p) for p in paths) + "]"
        body = (
            f"select {_event_columns_sql()} from read_parquet({listed}, hive_partitioning = false)"
        )
    else:
        nulls = ", ".join(f"cast(null as {kind}) as {name}" for name, kind in raw_event_columns())
        body = f"select {nulls} where false"
    con.execute(f"create or replace view raw.events as {body}")
