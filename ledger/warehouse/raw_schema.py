"""Creating the raw layer, and migrating a warehouse from before the Parquet layer."""

from __future__ import annotations

from pathlib import Path

import duckdb

from ledger.contract.fields import raw_event_columns
from ledger.core.durable import replace_durably
from ledger.core.sql import literal
from ledger.warehouse.event_files import land_events, record_session_tenants
from ledger.warehouse.raw_layout import (
    ADDED_EVENT_COLUMNS,
    EVENT_FILE_COLUMNS,
    EVENT_KEY_COLUMNS,
    INGESTED_FILE_COLUMNS,
    QUARANTINE_COLUMNS,
    SESSION_TENANT_COLUMNS,
    ddl,
    events_relation_kind,
    raw_root,
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
    sessions_known = _has_table(con, "session_tenants")
    con.execute(ddl("raw.session_tenants", SESSION_TENANT_COLUMNS))
    con.execute("create sequence if not exists raw.file_id_seq start 1")
    kind = events_relation_kind(con)
    if kind == "BASE TABLE":
        _migrate_events_table(con)
    else:
        complete_event_files(con)
        # Also for an existing view: it names its files by absolute path, so a home that moved
        # reads its own files again from here on.
        refresh_events_view(con)
    if not sessions_known and kind is not None:
        # A warehouse from before the table: its sessions' tenants, read once from its events
        # (the first event of a session by file and line decides, as the ingest would have).
        con.execute(record_session_tenants("raw.events"))


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables where table_catalog = "
            "current_database() and table_schema = 'raw' and table_name = ?",
            [name],
        ).fetchone()[0]
    )


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


_COMPLETE_COMMENT = "every file has the event columns: "


def complete_event_files(con: duckdb.DuckDBPyConnection) -> list[Path]:
    """Give every event file the columns of the current contract, NULL where it predates a field.

    A field the contract gained (`cost.reported`'s `revision`) is a column that files written
    before lack; readers (raw.events, an incremental build, Spark) read every file alike, so such
    a file is rewritten once, with the missing columns NULL (a field of a newer contract is NULL on
    every older event), in a temporary file renamed over it. The comment of raw.event_files records
    the columns every file has, so a warehouse already complete costs one small query. Returns
    the files rewritten.
    """
    wanted = [name for name, _ in raw_event_columns()]
    [(comment,)] = con.execute(
        "select comment from duckdb_tables() where database_name = current_database() "
        "and schema_name = 'raw' and table_name = 'event_files'"
    ).fetchall()
    have = (comment or "").removeprefix(_COMPLETE_COMMENT).split(",")
    if set(wanted) <= set(have):
        return []
    root = raw_root(con)
    paths = [root / p for (p,) in con.execute("select path from raw.event_files").fetchall()]
    rewritten: list[Path] = []
    if paths:
        listed = "[" + ", ".join(literal(str(p)) for p in paths) + "]"
        columns = con.execute(
            f"select file_name, list(name) from parquet_schema({listed}) group by file_name"
        ).fetchall()
        for file_name, names in sorted(columns):
            absent = set(wanted) - set(names)
            if not absent:
                continue
            path = Path(file_name)
            select = ", ".join(
                f"cast({'null' if name in absent else name} as {kind}) as {name}"
                for name, kind in raw_event_columns()
            )
            temporary = path.with_name(f".{path.name}.complete")
            con.execute(
                f"copy (select {select} from read_parquet({literal(str(path))})) "
                f"to {literal(str(temporary))} (format parquet, compression zstd)"
            )
            replace_durably(temporary, path)
            rewritten.append(path)
    con.execute(
        f"comment on table raw.event_files is {literal(_COMPLETE_COMMENT + ','.join(wanted))}"
    )
    return rewritten
