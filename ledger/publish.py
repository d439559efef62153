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
- after an incremental build only the parts that build could have changed are summarised: for a
  mart dbt refreshes incrementally (dbt's manifest), the ISO weeks of the refresh plan
  (`ops.refresh_weeks`; with a week either side when the table's part column is not its refresh
  key, since a row's dates lie at most a day apart) and the part of rows without a date; its other
  parts are the ones already published. Every other table, and every table after a full build,
  is summarised whole;
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
from datetime import UTC, date, datetime, timedelta
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
    # Tables whose parts were all summarised (the others: only the refreshed weeks' parts).
    tables_summarised_whole: int = 0


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


def _part_column(columns: list[tuple[str, str]], rows: int, whole_below: int) -> str | None:
    """The date column whose ISO week names the part of each row (None: one part for all)."""
    if rows < whole_below:
        return None
    dates = {name for name, kind in columns if kind == "DATE"}
    return next((name for name in PART_DATE_COLUMNS if name in dates), None)


def _part_expression(column: str | None) -> str:
    """SQL naming the part of each row of a table: its ISO week, or one part for all of it."""
    if column is None:
        return literal(WHOLE)
    return f"coalesce(strftime({_quote(column)}, '%G-W%V'), 'none')"


def _week_label(monday: date) -> str:
    year, week, _ = monday.isocalendar()
    return f"{year}-W{week:02d}"


def _parts_filter(column: str, parts: set[str]) -> str:
    """A condition that keeps the rows of `parts` of a table split by `column`, as ranges of the
    column (so that DuckDB can skip the row groups outside them) and the part names."""
    ranges = []
    for part in sorted(parts - {"none"}):
        year, week = part.split("-W")
        monday = date.fromisocalendar(int(year), int(week), 1)
        ranges.append(
            f"({_quote(column)} >= {literal(monday)} "
            f"and {_quote(column)} < {literal(monday + timedelta(days=7))})"
        )
    if "none" in parts:
        ranges.append(f"{_quote(column)} is null")
    return "(" + (" or ".join(ranges) or "false") + ")"


@dataclass(frozen=True)
class RefreshedWeeks:
    """What an incremental build could have changed in the marts (`refreshed_weeks`)."""

    keys: dict[str, str]  # incremental mart -> its refresh key (session_id or a date column)
    weeks: frozenset[str]  # the plan's ISO weeks, and the part of rows without a date
    around: frozenset[str]  # the same with a week either side

    def parts(self, table: str, column: str | None) -> set[str] | None:
        """The parts of `table`, split by `column`, that may have changed (None: any)."""
        key = self.keys.get(table)
        if key is None or column is None:
            return None
        return set(self.weeks if key.endswith("session_id") or key == column else self.around)


def refreshed_weeks(con: duckdb.DuckDBPyConnection, settings: Settings) -> RefreshedWeeks | None:
    """After an incremental build: which parts of which marts it could have changed; None after a
    full build, on Spark (every Spark build is full), or when the plan or dbt's manifest of the
    build is missing (then every table is summarised whole).

    A refresh replaces the rows of the refreshed sessions and of the refreshed ISO weeks (by the
    model's date key, `dbt/macros/incremental_refresh.sql`). Every date of a refreshed session
    lies in the plan's dates (its events' UTC dates, a day either side), so in its weeks; another
    date column of a date-keyed model lies at most a day from the key, so in those weeks or the
    ones either side."""
    if settings.engine != "duckdb":
        return None
    manifest_path = settings.dbt_target_dir / "manifest.json"
    [(found,)] = con.execute(
        "select count(*) from duckdb_tables() where database_name = 'warehouse' "
        "and schema_name = 'ops' and table_name in ('refresh_run', 'refresh_weeks')"
    ).fetchall()
    if found != 2 or not manifest_path.exists():
        return None
    [(mode,)] = con.execute("select any_value(mode) from warehouse.ops.refresh_run").fetchall()
    if mode != "incremental":
        return None
    mondays = [
        monday
        for (monday,) in con.execute(
            "select distinct week_start from warehouse.ops.refresh_weeks"
        ).fetchall()
    ]
    try:
        nodes = list(json.loads(manifest_path.read_text())["nodes"].values())
    except (OSError, ValueError, KeyError, AttributeError):
        return None
    keys = {}
    for node in nodes:
        config = node.get("config") or {}
        key = config.get("unique_key")
        if (
            node.get("resource_type") == "model"
            and node.get("schema") == PUBLISHED_SCHEMA
            and config.get("materialized") == "incremental"
            and isinstance(key, str)
        ):
            keys[node.get("alias") or node["name"]] = key
    weeks = {_week_label(monday) for monday in mondays} | {"none"}
    around = weeks | {
        _week_label(monday + timedelta(days=shift)) for monday in mondays for shift in (-7, 7)
    }
    return RefreshedWeeks(keys, frozenset(weeks), frozenset(around))


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
    con: duckdb.DuckDBPyConnection,
    table: str,
    column: str | None,
    only: set[str] | None = None,
) -> dict[str, tuple[int, str]]:
    """Each part's (rows, checksum) of `table` split by `column`, computed in DuckDB: every part,
    or the parts `only`."""
    source = f"warehouse.{PUBLISHED_SCHEMA}.{_quote(table)}"
    where = "" if only is None or column is None else f" where {_parts_filter(column, only)}"
    summaries = con.execute(
        f"select {_part_expression(column)} as part, count(*), cast(sum(hash(t)) as varchar) "
        f"from {source} t{where} group by all"
    ).fetchall()
    # (Grouping an empty table by a constant still gives one group, of no rows: not a part.)
    return {part: (n, checksum) for part, n, checksum in summaries if n}


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
    column: str | None,
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
    expression = _part_expression(column)
    where = "true" if column is None else _parts_filter(column, set(wanted))
    con.execute(
        f"copy (select {projection}, {expression} as __ledger_part from {source} "
        f"where {where}) to {literal(str(folder))} "
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


def _newest_event_sql(con: duckdb.DuckDBPyConnection) -> str:
    """The newest event and the number of events: from the manifest of raw files, which records
    each file's rows and newest event, rather than a read of every event."""
    [(manifest,)] = con.execute(
        "select count(*) from duckdb_tables() where database_name = 'warehouse' "
        "and schema_name = 'raw' and table_name = 'event_files'"
    ).fetchall()
    if manifest:
        return (
            "select max(max_occurred_at), cast(coalesce(sum(rows), 0) as bigint) "
            "from warehouse.raw.event_files"
        )
    return "select max(occurred_at), count(*) from warehouse.raw.events"


def publish(settings: Settings, *, whole_below: int | None = None) -> PublishResult:
    """Publish the warehouse's marts: rewrite the parts that changed, reuse the others, and
    atomically replace the published file with one whose views name the current parts.
    `whole_below`: tables with fewer rows are one part (default `WHOLE_BELOW`)."""
    target = settings.published_path
    target.parent.mkdir(parents=True, exist_ok=True)
    with _publish_lock(target.parent):
        leftovers = remove_leftovers(settings)
        return _publish(
            settings, WHOLE_BELOW if whole_below is None else whole_below, len(leftovers)
        )


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
    summarised: dict[str, str] = {}  # table -> 'whole' or 'refreshed weeks'
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        if settings.engine == "spark":
            _spark_marts_as_warehouse(con, settings)
        else:
            con.execute(f"attach {literal(str(settings.warehouse_path))} as warehouse (read_only)")
        con.execute(f"attach {literal(str(staging_db))} as published")
        try:
            tables = _tables(con)
            refreshed = refreshed_weeks(con, settings)
            con.execute(f"create schema published.{PUBLISHED_SCHEMA}")
            for table in tables:
                columns = _columns(con, table)
                schema = ", ".join(f"{name} {kind}" for name, kind in columns)
                [(rows,)] = con.execute(
                    f"select count(*) from warehouse.{PUBLISHED_SCHEMA}.{_quote(table)}"
                ).fetchall()
                column = _part_column(columns, rows, whole_below)
                only = refreshed.parts(table, column) if refreshed else None
                # The parts the build left alone are the published ones, if all of them are there
                # (split by week, of the same columns).
                before = [p for p in previous if p.table_name == table]
                if only is not None and not (
                    before
                    and all(
                        (table, p.part) in reusable and p.part != WHOLE and p.columns == schema
                        for p in before
                    )
                ):
                    only = None
                summaries = _summaries(con, table, column, only)
                if only is not None:
                    for p in before:
                        if p.part not in only:
                            summaries[p.part] = (p.rows, p.checksum)
                summarised[table] = "whole" if only is None else "refreshed weeks"
                keep: dict[str, Part] = {}
                for part, (rows, checksum) in summaries.items():
                    old = reusable.get((table, part))
                    if old and (old.rows, old.checksum, old.columns) == (rows, checksum, schema):
                        keep[part] = old
                wanted = sorted(set(summaries) - set(keep))
                files = (
                    _write_parts(con, table, columns, column, wanted, staging, parts, generation)
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
            newest = con.execute(_newest_event_sql(con)).fetchone()
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
        str(target),
        len(tables),
        published_at,
        written,
        reused,
        removed,
        leftovers,
        sum(1 for how in summarised.values() if how == "whole"),
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
