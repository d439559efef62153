"""The raw layer's Parquet files: landing events as files behind the manifest, appending rows
directly (tests), and removing the files a killed run left unlisted."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from ledger.contract.fields import raw_event_columns
from ledger.core.durable import replace_durably
from ledger.core.sql import literal
from ledger.warehouse.raw_layout import KEY_HASH, SESSION_HASH, raw_root, refresh_events_view


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
    written: list[Path] = []
    try:
        source = (
            _stage_through_table(con, relation, dates, staging, run)
            if dates and through_table
            else _stage_in_one_copy(relation, dates, staging, run)
        )
        for final, manifest_row in _move_into_place(con, root, dates, staging, batch_id):
            written.append(final)
            day, rows, first, last, one_file = manifest_row
            con.execute(
                "insert into raw.event_files values (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    str(final.relative_to(root)),
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
            f"file_id, line_number, {literal(batch_id)} from {source}"
        )
        read(record_session_tenants(source))
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


def record_session_tenants(relation: str) -> str:
    """SQL: insert into raw.session_tenants the sessions of `relation` (raw.events' columns) it
    does not hold yet, each with the tenant of its first row (by file and line). The ingest has
    quarantined every row whose session belongs to another tenant, so its rows agree."""
    return f"""
        insert into raw.session_tenants
        select n.* from (
          select session_id, tenant_id, {SESSION_HASH} as session_hash, file_id, line_number
          from {relation}
          where session_id is not null
          qualify row_number() over (
            partition by session_id
            order by file_id nulls first, line_number nulls first, tenant_id
          ) = 1
        ) n
        anti join raw.session_tenants k
          on k.session_hash = n.session_hash and k.session_id = n.session_id
    """


def _date_folder(day) -> str:
    return day.isoformat() if day else "unknown"


def _stage_in_one_copy(
    relation: str, dates: list[tuple], staging: Path, run: Callable[[str], list[tuple]]
) -> str:
    """Every date's rows into `staging/__event_date=<date>/` in one partitioned COPY; returns the
    relation the dedup keys are read from (the same one)."""
    if dates:
        columns = ", ".join(name for name, _ in raw_event_columns())
        staging.mkdir(parents=True, exist_ok=True)
        run(
            f"copy (select {columns}, coalesce(cast(cast(occurred_at as date) as varchar), "
            f"'unknown') as __event_date from {relation}) to {literal(str(staging))} "
            "(format parquet, compression zstd, partition_by (__event_date), "
            "overwrite_or_ignore)"
        )
    return relation


def _stage_through_table(
    con: duckdb.DuckDBPyConnection,
    relation: str,
    dates: list[tuple],
    staging: Path,
    run: Callable[[str], list[tuple]],
) -> str:
    """The relation read once into the temporary table `__landing`, then a COPY per date (cheaper
    than DuckDB's PARTITION_BY pass); returns `__landing`, which the dedup keys are read from."""
    columns = ", ".join(name for name, _ in raw_event_columns())
    staging.mkdir(parents=True, exist_ok=True)
    run(f"create or replace temp table __landing as select {columns} from {relation}")
    for number, (day, *_) in enumerate(dates):
        # a range on the column itself: the scan filters it before reading the others
        which = (
            f"occurred_at >= timestamp '{day.isoformat()}' "
            f"and occurred_at < timestamp '{day.isoformat()}' + interval 1 day"
            if day
            else "occurred_at is null"
        )
        part = staging / f"__event_date={_date_folder(day)}"
        part.mkdir()
        con.execute(
            f"copy (select * from __landing where {which}) "
            f"to {literal(str(part / f'{number}.parquet'))} "
            "(format parquet, compression zstd)"
        )
    return "__landing"


def _move_into_place(
    con: duckdb.DuckDBPyConnection, root: Path, dates: list[tuple], staging: Path, batch_id: str
):
    """Rename each staged file durably into `events/event_date=<date>/<batch>-<n>.parquet` and
    yield it with its manifest figures (date, rows, first and last `occurred_at`, file id)."""
    number = 0
    for day, rows, first, last, one_file in dates:
        made = sorted((staging / f"__event_date={_date_folder(day)}").glob("*.parquet"))
        for path in made:
            final = (
                root / "events" / f"event_date={_date_folder(day)}" / f"{batch_id}-{number}.parquet"
            )
            number += 1
            final.parent.mkdir(parents=True, exist_ok=True)
            if len(made) > 1:  # the writer split the date: each file its own figures
                [(rows, first, last)] = con.execute(
                    "select count(*), min(occurred_at), max(occurred_at) "
                    f"from read_parquet({literal(str(path))})"
                ).fetchall()
            replace_durably(path, final)
            yield final, (day, rows, first, last, one_file)


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
