"""The DuckDB warehouse: connections and the raw-layer tables the ingest writes.

One embedded file under `LEDGER_HOME`. DuckDB allows one writing process at a time; readers that must
not contend with the pipeline (the boards) read the published copy instead (`ledger.publish`).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ledger.contract.fields import raw_event_columns


def connect(path: Path | str, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse with the session settings every query here assumes."""
    if not read_only:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), read_only=read_only)
    # Timestamps are stored as naive UTC; a session zone other than UTC would shift casts.
    con.execute("set TimeZone = 'UTC'")
    return con


# What DuckDB says when the database file itself is damaged (as opposed to locked or missing).
CORRUPTION_SIGNS = (
    "not a valid duckdb database file",
    "corrupt database file",
    "could not read enough bytes",
    "does not match stored checksum",
)


def is_corruption(exc: BaseException) -> bool:
    """True when `exc` says a DuckDB file is damaged; the fix is `ledger recover`."""
    text = str(exc).lower()
    return isinstance(exc, duckdb.Error) and any(sign in text for sign in CORRUPTION_SIGNS)


def corruption_message(exc: BaseException, path: Path | str | None = None) -> str:
    """One line naming the damage and the recovery command."""
    first = " ".join(str(exc).strip().split("\n")[0].split())
    where = f"the warehouse {path}" if path else "the warehouse"
    return (
        f"{where} is damaged and cannot be read ({first}); rebuild it from the landing folder "
        "with `ledger recover` (the damaged file is kept aside)"
    )


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


def _ddl(table: str, columns: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> str:
    body = ",\n  ".join(f"{name} {kind}" for name, kind in columns)
    return f"create table if not exists {table} (\n  {body}\n)"


# raw.events.key_hash: how an event's deduplication key is hashed (the ingest looks earlier
# versions of a key up by it).
KEY_HASH = "hash(source, event_id)"
# Columns raw.events gained after warehouses were first created, and how to fill them in (a
# field of a newer contract version is NULL on every older event).
_ADDED_EVENT_COLUMNS = {"key_hash": KEY_HASH}


def ensure_raw_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the raw layer if missing: events, quarantine and the manifest of ingested files.

    A warehouse made before a column was added to raw.events gets it, filled in.
    """
    con.execute("create schema if not exists raw")
    con.execute(_ddl("raw.events", raw_event_columns()))
    con.execute(_ddl("raw.quarantine", QUARANTINE_COLUMNS))
    con.execute(_ddl("raw.ingested_files", INGESTED_FILE_COLUMNS))
    con.execute("create sequence if not exists raw.file_id_seq start 1")
    present = {
        name
        for (name,) in con.execute(
            "select column_name from duckdb_columns() where database_name = current_database() "
            "and schema_name = 'raw' and table_name = 'events'"
        ).fetchall()
    }
    for name, kind in raw_event_columns():
        if name not in present:
            con.execute(f"alter table raw.events add column {name} {kind}")
            if name in _ADDED_EVENT_COLUMNS:
                con.execute(f"update raw.events set {name} = {_ADDED_EVENT_COLUMNS[name]}")
