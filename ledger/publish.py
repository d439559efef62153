"""The published copy: a small read-only DuckDB file of views over Parquet parts of the marts.

DuckDB lets one process write a database file; a board reading the warehouse itself would either
block the pipeline or fail on its lock. So after each successful build the pipeline publishes what
the boards need, and readers open only that.

Publishing costs what changed, not the size of the marts:
- each mart is stored as Parquet *parts* under `published/parts/<table>/`: one per ISO week of its
  date column (`business_date`, `x_business_date`, `usage_date` or `week_start_date`), or one part
  for the whole table when it is small (under `WHOLE_BELOW` rows) or has no such column;
- a part's content is summarised in DuckDB by its row count and the sum of its rows' hashes (with
  the table's column names and types); a part whose summary equals the one the current published
  file records is reused as it is, only the others are written again;
- the published file itself (`boards.duckdb`) holds the views `marts.<table>` over the current
  parts and the `publication` row; each view's comment lists its parts with their summaries
  (JSON), so the file names nothing but the marts and the publication. It is built under a
  temporary name and renamed over the old one: a rename is atomic, so a reader sees the old
  generation or the new one, never a half-built state.
Parts are removed only when neither the new file nor the one it replaced refers to them, so a
reader that still has the previous file open keeps reading it undisturbed. Everything a killed
publish left behind (the temporary file, a staging folder, unreferenced parts) is removed at the
start of the next one, under a lock that keeps two publishes apart.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from ledger.settings import Settings
from ledger.sql import literal

# The one schema readers may name: everything people see is computed in a mart (the boards, the
# alerts, the weekly review and the export read nothing else), so nothing else is published.
PUBLISHED_SCHEMA = "marts"
# A table with fewer rows than this is one part: rewriting it costs less than keeping it in weeks.
WHOLE_BELOW = 100_000
# The date column a table is split by, the first one it has (its ISO week names the part).
PART_DATE_COLUMNS = ("business_date", "x_business_date", "usage_date", "week_start_date")
WHOLE = "all"
PARTS_DIR = "parts"
LOCK_NAME = ".publish.lock"
# Parquet has no 128-bit integer (DuckDB would write DOUBLE): such columns go as DECIMAL(38, 0),
# exact, and the view casts every column back to its type in the warehouse.
_PARQUET_SAFE = {"HUGEINT": "DECIMAL(38,0)", "UHUGEINT": "DECIMAL(38,0)"}


@dataclass(frozen=True)
class PublishResult:
    path: str
    tables: int
    published_at: datetime
    parts_written: int = 0
    parts_reused: int = 0
    parts_removed: int = 0
    leftovers_removed: int = 0


@dataclass(frozen=True)
class Part:
    """One Parquet part of a published table and the summary of its content."""

    table_name: str
    part: str
    rows: int
    checksum: str
    columns: str  # "name type, ..." of the table: a change of schema rewrites every part
    files: tuple[str, ...]  # absolute paths


def parts_dir(settings: Settings) -> Path:
    return settings.published_path.parent / PARTS_DIR


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    found = con.execute(
        "select table_name from information_schema.tables where table_catalog = 'warehouse' "
        "and table_schema = ? and table_type in ('BASE TABLE', 'VIEW') order by 1",
        [PUBLISHED_SCHEMA],
    ).fetchall()
    return [name for (name,) in found]


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]]:
    return con.execute(
        "select column_name, data_type from duckdb_columns() where database_name = 'warehouse' "
        "and schema_name = ? and table_name = ? order by column_index",
        [PUBLISHED_SCHEMA, table],
    ).fetchall()


def _part_expression(columns: list[tuple[str, str]], rows: int, whole_below: int) -> str:
    """SQL naming the part of each row of a table: its ISO week, or one part for all of it."""
    if rows < whole_below:
        return literal(WHOLE)
    dates = {name for name, kind in columns if kind == "DATE"}
    for name in PART_DATE_COLUMNS:
        if name in dates:
            return f"coalesce(strftime({_quote(name)}, '%G-W%V'), 'none')"
    return literal(WHOLE)


@contextmanager
def _publish_lock(folder: Path) -> Iterator[None]:
    """One publish at a time per published folder (held across processes until released)."""
    with open(folder / LOCK_NAME, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _staging_name(target: Path) -> str:
    return f".{target.name}."


def remove_leftovers(settings: Settings) -> list[Path]:
    """Delete what a killed publish left behind: its temporary database file (and write-ahead log)
    and its staging folder of parts not yet renamed. Call holding the publish lock."""
    target = settings.published_path
    removed: list[Path] = []
    if not target.parent.exists():
        return removed
    for path in sorted(target.parent.glob(_staging_name(target) + "*")):
        if path.name.endswith((".tmp", ".tmp.wal")):
            path.unlink(missing_ok=True)
            removed.append(path)
    parts = parts_dir(settings)
    if parts.exists():
        for path in sorted(parts.glob(".staging-*")):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def remove_publish_leftovers(settings: Settings) -> list[Path]:
    """What a killed publish left behind, removed at the start of a build (waits for a publish
    in progress). Parts no file names are left to the next publish: only it knows which parts
    the previous generation, still open in a reader perhaps, refers to."""
    folder = settings.published_path.parent
    if not folder.exists():
        return []
    with _publish_lock(folder):
        return remove_leftovers(settings)


def published_parts(path: Path) -> list[Part]:
    """The parts a published file refers to (none for a file published before parts existed)."""
    if not path.exists():
        return []
    try:
        with duckdb.connect() as con:
            con.execute(f"attach {literal(str(path))} as previous (read_only)")
            comments = con.execute(
                "select view_name, comment from duckdb_views() where database_name = 'previous' "
                "and schema_name = ? order by view_name",
                [PUBLISHED_SCHEMA],
            ).fetchall()
    except duckdb.Error:
        # A damaged or foreign file: nothing to reuse; it is replaced all the same.
        return []
    found = []
    for table, comment in comments:
        try:
            listed = json.loads(comment or "")
            found += [
                Part(
                    table, p["part"], p["rows"], p["checksum"], listed["columns"], tuple(p["files"])
                )
                for p in listed["parts"]
            ]
        except (ValueError, KeyError, TypeError):
            continue  # not a parts list: a table published before parts existed
    return found


def _parts_comment(columns: str, parts: list[Part]) -> str:
    """The comment on a published view: its table's columns and parts (`published_parts`)."""
    return json.dumps(
        {
            "columns": columns,
            "parts": [
                {"part": p.part, "rows": p.rows, "checksum": p.checksum, "files": list(p.files)}
                for p in parts
            ],
        }
    )


def _summaries(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[tuple[str, str]], whole_below: int
) -> tuple[str, dict[str, tuple[int, str]]]:
    """The part expression of `table` and each part's (rows, checksum), computed in DuckDB."""
    source = f"warehouse.{PUBLISHED_SCHEMA}.{_quote(table)}"
    [(rows,)] = con.execute(f"select count(*) from {source}").fetchall()
    expression = _part_expression(columns, rows, whole_below)
    summaries = con.execute(
        f"select {expression} as part, count(*), cast(sum(hash(t)) as varchar) "
        f"from {source} t group by all"
    ).fetchall()
    # (Grouping an empty table by a constant still gives one group, of no rows: not a part.)
    return expression, {part: (n, checksum) for part, n, checksum in summaries if n}


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_parts(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: list[tuple[str, str]],
    expression: str,
    wanted: list[str],
    staging: Path,
    parts: Path,
    generation: str,
) -> dict[str, tuple[str, ...]]:
    """Write the parts `wanted` of `table` in one pass; returns part -> its files (final paths)."""
    source = f"warehouse.{PUBLISHED_SCHEMA}.{_quote(table)}"
    projection = ", ".join(
        f"cast({_quote(name)} as {_PARQUET_SAFE[kind]}) as {_quote(name)}"
        if kind in _PARQUET_SAFE
        else _quote(name)
        for name, kind in columns
    )
    folder = staging / table
    folder.mkdir(parents=True, exist_ok=True)
    listed = ", ".join(literal(part) for part in wanted)
    con.execute(
        f"copy (select {projection}, {expression} as __ledger_part from {source} "
        f"where {expression} in ({listed})) to {literal(str(folder))} "
        "(format parquet, compression zstd, partition_by (__ledger_part), overwrite_or_ignore)"
    )
    written: dict[str, tuple[str, ...]] = {}
    for part in wanted:
        made = folder / f"__ledger_part={part}"
        final = parts / table / f"{part}.{generation}"
        final.parent.mkdir(parents=True, exist_ok=True)
        files = sorted(made.glob("*.parquet"))
        for path in files:
            _fsync(path)
        os.replace(made, final)
        written[part] = tuple(str(final / path.name) for path in files)
    return written


def _view_sql(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[tuple[str, str]], files: list[str]
) -> str:
    """`marts.<table>` over its parts, every column cast back to its warehouse type."""
    if not files:
        nulls = ", ".join(f"cast(null as {kind}) as {_quote(name)}" for name, kind in columns)
        return f"select {nulls} where false"
    listing = "[" + ", ".join(literal(path) for path in files) + "]"
    reader = f"read_parquet({listing}, hive_partitioning = false)"
    stored = dict(
        con.execute(
            f"select column_name, column_type from (describe select * from {reader})"
        ).fetchall()
    )
    projection = ", ".join(
        _quote(name)
        if stored.get(name) == kind
        else f"cast({_quote(name)} as {kind}) as {_quote(name)}"
        for name, kind in columns
    )
    return f"select {projection} from {reader}"


def _spark_marts_as_warehouse(con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
    """After a Spark build the marts are Parquet files Spark wrote, not tables of the DuckDB
    warehouse: catalog `warehouse` becomes an in-memory one whose `marts` views them (and whose
    `raw.events` is the warehouse's), so publishing reads either engine's marts the same way."""
    from ledger.spark import marts_selects

    con.execute(f"attach {literal(str(settings.warehouse_path))} as duckdb_warehouse (read_only)")
    con.execute("attach ':memory:' as warehouse")
    con.execute("create schema warehouse.marts")
    con.execute("create schema warehouse.raw")
    con.execute("create view warehouse.raw.events as select * from duckdb_warehouse.raw.events")
    for table, select in marts_selects(con, settings).items():
        con.execute(f"create view warehouse.{table} as {select}")


def publish(settings: Settings, *, whole_below: int = WHOLE_BELOW) -> PublishResult:
    """Publish the warehouse's marts: rewrite the parts that changed, reuse the others, and
    atomically replace the published file with one whose views name the current parts."""
    target = settings.published_path
    target.parent.mkdir(parents=True, exist_ok=True)
    with _publish_lock(target.parent):
        leftovers = remove_leftovers(settings)
        return _publish(settings, whole_below, len(leftovers))


def _publish(settings: Settings, whole_below: int, leftovers: int) -> PublishResult:
    target = settings.published_path
    parts = parts_dir(settings).resolve()
    published_at = datetime.now(UTC).replace(tzinfo=None)
    generation = f"{published_at:%Y%m%dT%H%M%S%f}-{os.getpid()}"
    staging_db = target.with_name(f"{_staging_name(target)}{generation}.tmp")
    staging = parts / f".staging-{generation}"
    previous = published_parts(target)
    own = str(parts) + os.sep
    reusable = {
        (p.table_name, p.part): p
        for p in previous
        if all(f.startswith(own) and os.path.exists(f) for f in p.files)
    }
    current: list[Part] = []
    written = reused = 0
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        if settings.engine == "spark":
            _spark_marts_as_warehouse(con, settings)
        else:
            con.execute(f"attach {literal(str(settings.warehouse_path))} as warehouse (read_only)")
        con.execute(f"attach {literal(str(staging_db))} as published")
        try:
            tables = _tables(con)
            con.execute(f"create schema published.{PUBLISHED_SCHEMA}")
            for table in tables:
                columns = _columns(con, table)
                schema = ", ".join(f"{name} {kind}" for name, kind in columns)
                expression, summaries = _summaries(con, table, columns, whole_below)
                keep: dict[str, Part] = {}
                for part, (rows, checksum) in summaries.items():
                    old = reusable.get((table, part))
                    if old and (old.rows, old.checksum, old.columns) == (rows, checksum, schema):
                        keep[part] = old
                wanted = sorted(set(summaries) - set(keep))
                files = (
                    _write_parts(
                        con, table, columns, expression, wanted, staging, parts, generation
                    )
                    if wanted
                    else {}
                )
                written += len(wanted)
                reused += len(keep)
                for part in sorted(summaries):
                    rows, checksum = summaries[part]
                    current.append(
                        keep.get(part) or Part(table, part, rows, checksum, schema, files[part])
                    )
                mine = [p for p in current if p.table_name == table]
                view = f"published.{PUBLISHED_SCHEMA}.{_quote(table)}"
                con.execute(
                    f"create view {view} as "
                    + _view_sql(con, table, columns, [f for p in mine for f in p.files])
                )
                con.execute(f"comment on view {view} is {literal(_parts_comment(schema, mine))}")
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
    shutil.rmtree(staging, ignore_errors=True)
    _fsync(staging_db)
    os.replace(staging_db, target)
    _fsync(target.parent)
    removed = _remove_unreferenced(parts, current, previous)
    return PublishResult(
        str(target), len(tables), published_at, written, reused, removed, leftovers
    )


def _remove_unreferenced(parts: Path, current: list[Part], previous: list[Part]) -> int:
    """Delete the part folders neither the new file nor the one it replaced names (the previous
    generation stays for readers that still have the old file open)."""
    if not parts.exists():
        return 0
    kept = {Path(f).parent for p in (*current, *previous) for f in p.files}
    removed = 0
    for table in sorted(parts.iterdir()):
        if not table.is_dir() or table.name.startswith("."):
            continue
        for folder in sorted(table.iterdir()):
            if folder not in kept:
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
        if not any(table.iterdir()):
            table.rmdir()
    return removed
