"""The DuckDB warehouse: connections and the raw-layer tables the ingest writes.

One embedded file under `LEDGER_HOME`. DuckDB allows one writing process at a time; readers that must
not contend with the pipeline (the boards) read the published copy instead (`ledger.publish`).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
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


def _events_relation_kind(con: duckdb.DuckDBPyConnection) -> str | None:
    rows = con.execute(
        "select table_type from information_schema.tables where table_catalog = current_database() "
        "and table_schema = 'raw' and table_name = 'events'"
    ).fetchall()
    return rows[0][0] if rows else None


def ensure_raw_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the raw layer if missing: the events' Parquet manifest and keys, the quarantine and
    the manifest of ingested files; `raw.events` is a view over the manifest's Parquet files.

    A warehouse whose raw.events is still a table (before the Parquet layer) is migrated: its
    rows are written to Parquet and the table becomes the view, in one transaction.
    """
    con.execute("create schema if not exists raw")
    con.execute(_ddl("raw.quarantine", QUARANTINE_COLUMNS))
    con.execute(_ddl("raw.ingested_files", INGESTED_FILE_COLUMNS))
    con.execute(_ddl("raw.event_files", EVENT_FILE_COLUMNS))
    con.execute(_ddl("raw.event_keys", EVENT_KEY_COLUMNS))
    con.execute("create sequence if not exists raw.file_id_seq start 1")
    kind = _events_relation_kind(con)
    if kind == "BASE TABLE":
        _migrate_events_table(con)
    else:
        complete_event_files(con)
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
                if name in _ADDED_EVENT_COLUMNS:
                    con.execute(f"update raw.events set {name} = {_ADDED_EVENT_COLUMNS[name]}")
        written = land_events(con, "raw.events", file_id=None, batch_id="migrated", refresh=False)
        con.execute("drop table raw.events")
        refresh_events_view(con)
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        for path in written:
            path.unlink(missing_ok=True)
        raise


def _event_columns_sql() -> str:
    return ", ".join(f"cast({name} as {kind}) as {name}" for name, kind in raw_event_columns())


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
        listed = "[" + ", ".join(_literal(str(p)) for p in paths) + "]"
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
                f"copy (select {select} from read_parquet({_literal(str(path))})) "
                f"to {_literal(str(temporary))} (format parquet, compression zstd)"
            )
            _fsync(temporary)
            os.replace(temporary, path)
            _fsync(path.parent)
            rewritten.append(path)
    con.execute(
        f"comment on table raw.event_files is {_literal(_COMPLETE_COMMENT + ','.join(wanted))}"
    )
    return rewritten


def refresh_events_view(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)define raw.events over exactly the Parquet files in raw.event_files."""
    root = raw_root(con)
    paths = [
        str(root / path)
        for (path,) in con.execute("select path from raw.event_files order by path").fetchall()
    ]
    if paths:
        listed = "[" + ", ".join(_literal(p) for p in paths) + "]"
        body = (
            f"select {_event_columns_sql()} from read_parquet({listed}, hive_partitioning = false)"
        )
    else:
        nulls = ", ".join(f"cast(null as {kind}) as {name}" for name, kind in raw_event_columns())
        body = f"select {nulls} where false"
    con.execute(f"create or replace view raw.events as {body}")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def land_events(
    con: duckdb.DuckDBPyConnection,
    relation: str,
    *,
    file_id: int | None,
    file_id_from_rows: bool = False,
    batch_id: str | None = None,
    committed_at: datetime | None = None,
    refresh: bool = True,
    run: Callable[[str], list[tuple]] | None = None,
    through_table: bool = False,
) -> list[Path]:
    """Write the events of `relation` (raw.events' columns) as Parquet files, one per UTC date of
    `occurred_at`, and make them visible: manifest rows, dedup keys and the view.

    Must run inside the caller's transaction: the files become part of raw.events only when it
    commits; if it does not, the caller deletes the returned files (else the next ingest does, as
    orphans). The files are written in a staging folder, flushed to disk, then renamed (the rows
    of a date in no particular order).
    `run` executes the statements that read `relation` (default: on `con`), for a relation that
    names a Python object only the caller's scope can see. With `file_id_from_rows`, a Parquet
    file's manifest `file_id` is that of its rows when they all come from one landing file (NULL
    when several landing files committed together share it; each event keeps its own file_id).
    With `through_table`, the relation is read once into a temporary table and each date is
    written by a COPY of its own (DuckDB's PARTITION_BY pass costs about 1.7x the plain writes);
    the table's rows stay in memory until the transaction ends, so a caller that lands a large
    file piece by piece in one transaction leaves it off.
    """
    run = run or (lambda sql: con.execute(sql).fetchall())
    root = raw_root(con)
    batch_id = batch_id or uuid.uuid4().hex
    committed_at = committed_at or datetime.now(UTC).replace(tzinfo=None)
    columns = ", ".join(name for name, _ in raw_event_columns())
    written: list[Path] = []
    files_of_date = (
        "case when count(distinct file_id) = 1 then min(file_id) end"
        if file_id_from_rows
        else "cast(null as bigint)"
    )
    dates = run(
        f"select cast(occurred_at as date) as d, count(*), min(occurred_at), max(occurred_at), "
        f"{files_of_date} from {relation} group by all order by d nulls first"
    )
    # Every date's file in one pass over the relation, into a staging folder (a killed run leaves
    # it to `remove_orphan_event_files`), then each renamed into its date's folder.
    staging = root / "events" / f".{batch_id}.tmp"
    source = relation
    try:
        if dates and through_table:
            staging.mkdir(parents=True, exist_ok=True)
            run(f"create or replace temp table __landing as select {columns} from {relation}")
            source = "__landing"
            for number, (day, *_) in enumerate(dates):
                # a range on the column itself: the scan filters it before reading the others
                which = (
                    f"occurred_at >= timestamp '{day.isoformat()}' "
                    f"and occurred_at < timestamp '{day.isoformat()}' + interval 1 day"
                    if day
                    else "occurred_at is null"
                )
                part = staging / f"__event_date={day.isoformat() if day else 'unknown'}"
                part.mkdir()
                con.execute(
                    f"copy (select * from __landing where {which}) "
                    f"to {_literal(str(part / f'{number}.parquet'))} "
                    "(format parquet, compression zstd)"
                )
        elif dates:
            staging.mkdir(parents=True, exist_ok=True)
            run(
                f"copy (select {columns}, coalesce(cast(cast(occurred_at as date) as varchar), "
                f"'unknown') as __event_date from {relation}) to {_literal(str(staging))} "
                "(format parquet, compression zstd, partition_by (__event_date), "
                "overwrite_or_ignore)"
            )
        number = 0
        for day, rows, first, last, one_file in dates:
            folder = f"event_date={day.isoformat() if day else 'unknown'}"
            made = sorted(
                (staging / f"__event_date={day.isoformat() if day else 'unknown'}").glob(
                    "*.parquet"
                )
            )
            for path in made:
                relative = f"events/{folder}/{batch_id}-{number}.parquet"
                number += 1
                final = root / relative
                final.parent.mkdir(parents=True, exist_ok=True)
                if len(made) > 1:  # the writer split the date: each file its own figures
                    [(rows, first, last)] = con.execute(
                        "select count(*), min(occurred_at), max(occurred_at) "
                        f"from read_parquet({_literal(str(path))})"
                    ).fetchall()
                _fsync(path)
                os.replace(path, final)
                written.append(final)
                _fsync(final.parent)
                con.execute(
                    "insert into raw.event_files values (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        relative,
                        batch_id,
                        one_file if file_id_from_rows else file_id,
                        day,
                        rows,
                        first,
                        last,
                        committed_at,
                    ],
                )
        read = con.execute if source != relation else run
        read(
            f"insert into raw.event_keys select source, event_id, key_hash, payload_hash, "
            f"file_id, line_number, {_literal(batch_id)} from {source}"
        )
        if source != relation:  # (a failed transaction rolls it back with the rest)
            con.execute("drop table __landing")
        if refresh:
            refresh_events_view(con)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_orphan_event_files(con: duckdb.DuckDBPyConnection) -> list[Path]:
    """Delete Parquet files under the raw root that the manifest does not list (a run that died
    between writing a file and committing it). Call with the warehouse open for writing."""
    root = raw_root(con) / "events"
    if not root.exists():
        return []
    listed = {path for (path,) in con.execute("select path from raw.event_files").fetchall()}
    removed = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and str(path.relative_to(root.parent)) not in listed:
            path.unlink()
            removed.append(path)
    # The staging folders of killed writes (`land_events`), now empty.
    for folder in sorted(root.glob(".*.tmp"), reverse=True):
        shutil.rmtree(folder, ignore_errors=True)
    return removed


def append_events(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    """Append contract-shaped rows to raw.events directly (tests, hand-made sessions): columns
    not given are NULL; `key_hash` is filled in. No validation, no deduplication."""
    names = [name for name, _ in raw_event_columns()]
    con.execute("create or replace temp table _appended as select * from raw.events where false")
    try:
        con.executemany(
            f"insert into _appended ({', '.join(names)}) values ({', '.join('?' for _ in names)})",
            [[row.get(name) for name in names] for row in rows],
        )
        con.execute(f"update _appended set key_hash = {KEY_HASH} where key_hash is null")
        con.execute("begin transaction")
        written: list[Path] = []
        try:
            written = land_events(con, "_appended", file_id=None)
            con.execute("commit")
        except BaseException:
            con.execute("rollback")
            for path in written:
                path.unlink(missing_ok=True)
            raise
    finally:
        con.execute("drop table if exists _appended")


def copy_warehouse(source: Path, target: Path) -> None:
    """Copy a warehouse: its database file and the Parquet files of its raw layer (the file alone
    is not the whole warehouse). The copy's raw.events reads the copied files."""
    import shutil

    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    with connect(source, read_only=True) as con:
        source_raw = raw_root(con)
    with connect(target) as con:
        target_raw = raw_root(con)
        if source_raw.exists():
            shutil.copytree(source_raw, target_raw, dirs_exist_ok=True)
        if _events_relation_kind(con) == "VIEW":
            refresh_events_view(con)
