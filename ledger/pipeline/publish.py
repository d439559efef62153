"""The published copy: a small read-only DuckDB file of views over Parquet parts of the marts.

DuckDB lets one process write a database file; a board reading the warehouse itself would either
block the pipeline or fail on its lock. So after each successful build the pipeline publishes what
the boards need, and readers open only that.

Publishing costs what changed, not the size of the marts:
- each mart is stored as Parquet *parts* under `published/parts/<table>/`: one per ISO week of its
  date column (`business_date`, `x_business_date`, `usage_date` or `week_start_date`), or one part
  for the whole table when it is small (under `WHOLE_BELOW` rows) or has no such column;
- a part's content is summarised in DuckDB by its row count and the sum of its rows' hashes (with
  the table's column names and types, and its order: the session-keyed marts' parts are written in
  session order, `published_parts.SESSION_ORDERED`); a part whose summary equals the one the
  current published file records is reused as it is, only the others are written again;
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

import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from ledger.core.durable import replace_durably
from ledger.core.home_lock import home_lock
from ledger.core.settings import Settings
from ledger.core.sql import literal
from ledger.pipeline.publish_leftovers import (
    publish_lock,
    remove_leftovers,
    remove_publish_leftovers,
    staging_name,
)
from ledger.pipeline.published_parts import (
    OPS_SCHEMA,
    OPS_TABLES,
    PUBLISHED_SCHEMA,
    WHOLE,
    Part,
    layout,
    mart_columns,
    mart_tables,
    ops_tables,
    part_column,
    parts_comment,
    parts_dir,
    published_parts,
    quote,
    remove_unreferenced,
    source_of,
    summarise_parts,
    view_sql,
    write_parts,
)
from ledger.pipeline.refreshed_weeks import RefreshedWeeks, refreshed_weeks

__all__ = [
    "PublishResult",
    "publish",
    "publish_records",
    "published_parts",
    "remove_publish_leftovers",
]

# A table with fewer rows than this is one part: rewriting it costs less than keeping it in weeks.
WHOLE_BELOW = 100_000


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


def _spark_marts_as_warehouse(con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
    """After a Spark build the marts are Parquet files Spark wrote, not tables of the DuckDB
    warehouse: catalog `warehouse` becomes an in-memory one whose `marts` views them (and whose
    `raw.events` is the warehouse's), so publishing reads either engine's marts the same way."""
    from ledger.pipeline.spark import marts_selects

    con.execute(f"attach {literal(str(settings.warehouse_path))} as duckdb_warehouse (read_only)")
    con.execute("attach ':memory:' as warehouse")
    con.execute("create schema warehouse.marts")
    con.execute("create schema warehouse.raw")
    con.execute("create view warehouse.raw.events as select * from duckdb_warehouse.raw.events")
    for table, select in marts_selects(con, settings).items():
        con.execute(f"create view warehouse.{table} as {select}")
    # The alerts' ledger lives in the DuckDB warehouse whatever the engine.
    con.execute(f"create schema warehouse.{OPS_SCHEMA}")
    for (name,) in con.execute(
        "select table_name from information_schema.tables "
        "where table_catalog = 'duckdb_warehouse' and table_schema = ?",
        [OPS_SCHEMA],
    ).fetchall():
        if name in OPS_TABLES.values():
            con.execute(
                f"create view warehouse.{OPS_SCHEMA}.{quote(name)} as "
                f"select * from duckdb_warehouse.{OPS_SCHEMA}.{quote(name)}"
            )


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
    `whole_below`: tables with fewer rows are one part (default `WHOLE_BELOW`). Holds the home's
    run lock (waiting for another run's end) and the publish lock of the published folder."""
    target = settings.published_path
    target.parent.mkdir(parents=True, exist_ok=True)
    with home_lock(settings.home, wait=True), publish_lock(target.parent):
        leftovers = remove_leftovers(settings)
        return _publish(
            settings, WHOLE_BELOW if whole_below is None else whole_below, len(leftovers)
        )


@dataclass
class _Generation:
    """What one publish is building: the parts the previous file names (and which of them can be
    reused as they are), the parts of the new file, and the counts it reports."""

    previous: list[Part]
    reusable: dict[tuple[str, str], Part]
    staging: Path
    parts: Path
    name: str
    current: list[Part] = field(default_factory=list)
    written: int = 0
    reused: int = 0
    summarised_whole: int = 0


def _generation(settings: Settings) -> tuple[_Generation, Path, datetime]:
    """A new generation of the published copy: its name, its staging places, the previous parts."""
    target = settings.published_path
    parts = parts_dir(settings).resolve()
    published_at = datetime.now(UTC).replace(tzinfo=None)
    name = f"{published_at:%Y%m%dT%H%M%S%f}-{os.getpid()}"
    staging_db = target.with_name(f"{staging_name(target)}{name}.tmp")
    previous = published_parts(target)
    own = str(parts) + os.sep
    generation = _Generation(
        previous=previous,
        reusable={
            (p.table_name, p.part): p
            for p in previous
            if all(f.startswith(own) and os.path.exists(f) for f in p.files)
        },
        staging=parts / f".staging-{name}",
        parts=parts,
        name=name,
    )
    return generation, staging_db, published_at


def _replace(
    settings: Settings,
    generation: _Generation,
    staging_db: Path,
    tables: int,
    published_at: datetime,
    leftovers: int,
) -> PublishResult:
    """Rename the new file into place and remove the parts neither generation names."""
    shutil.rmtree(generation.staging, ignore_errors=True)
    replace_durably(staging_db, settings.published_path)
    removed = remove_unreferenced(generation.parts, generation.current, generation.previous)
    return PublishResult(
        str(settings.published_path),
        tables,
        published_at,
        generation.written,
        generation.reused,
        removed,
        leftovers,
        generation.summarised_whole,
    )


def _publish(settings: Settings, whole_below: int, leftovers: int) -> PublishResult:
    generation, staging_db, published_at = _generation(settings)
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        if settings.engine == "spark":
            _spark_marts_as_warehouse(con, settings)
        else:
            con.execute(f"attach {literal(str(settings.warehouse_path))} as warehouse (read_only)")
        con.execute(f"attach {literal(str(staging_db))} as published")
        try:
            tables = mart_tables(con) + ops_tables(con)
            refreshed = refreshed_weeks(con, settings)
            con.execute(f"create schema published.{PUBLISHED_SCHEMA}")
            for table in tables:
                _publish_table(con, table, whole_below, refreshed, generation)
            _write_publication(con, settings, published_at)
        finally:
            con.execute("detach published")
            con.execute("detach warehouse")
    return _replace(settings, generation, staging_db, len(tables), published_at, leftovers)


def publish_records(settings: Settings) -> PublishResult | None:
    """Publish the ops records again (after `ledger alerts run` recorded anomalies, or a weekly
    review restatements), so the boards hold what an alert just linked to. The marts are never read from the warehouse
    here (a build that failed half-way may have left them half-updated): the current file's views
    of the marts, their parts and its publication row are carried over as they are. None when
    nothing is published yet."""
    target = settings.published_path
    if not target.exists():
        return None
    with home_lock(settings.home, wait=True), publish_lock(target.parent):
        leftovers = len(remove_leftovers(settings))
        generation, staging_db, published_at = _generation(settings)
        with duckdb.connect() as con:
            con.execute("set TimeZone = 'UTC'")
            con.execute(f"attach {literal(str(settings.warehouse_path))} as warehouse (read_only)")
            con.execute(f"attach {literal(str(target))} as previous (read_only)")
            con.execute(f"attach {literal(str(staging_db))} as published")
            try:
                con.execute(f"create schema published.{PUBLISHED_SCHEMA}")
                carried = con.execute(
                    "select view_name, sql, comment from duckdb_views() "
                    "where database_name = 'previous' and schema_name = ? order by view_name",
                    [PUBLISHED_SCHEMA],
                ).fetchall()
                con.execute("use published")
                for view, sql, comment in carried:
                    if view in OPS_TABLES:
                        continue
                    con.execute(sql)
                    con.execute(
                        f"comment on view {PUBLISHED_SCHEMA}.{quote(view)} is {literal(comment)}"
                    )
                con.execute("use memory")
                generation.current += [
                    p for p in generation.previous if p.table_name not in OPS_TABLES
                ]
                tables = ops_tables(con)
                for table in tables:
                    _publish_table(con, table, WHOLE_BELOW, None, generation)
                con.execute(
                    "create table published.main.publication as "
                    "select * from previous.main.publication"
                )
            finally:
                con.execute("use memory")
                for catalog in ("published", "previous", "warehouse"):
                    con.execute(f"detach {catalog}")
        marts = len([view for view, _, _ in carried if view not in OPS_TABLES])
        return _replace(
            settings, generation, staging_db, marts + len(tables), published_at, leftovers
        )


def _publish_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    whole_below: int,
    refreshed: RefreshedWeeks | None,
    generation: _Generation,
) -> None:
    """Summarise `table`'s parts (all, or the refreshed weeks'), write the changed ones, reuse the
    others, and create its view `published.marts.<table>` over them."""
    columns = mart_columns(con, table)
    schema = layout(table, columns)
    [(rows,)] = con.execute(f"select count(*) from {source_of(table)}").fetchall()
    column = part_column(columns, rows, whole_below)
    only = refreshed.parts(table, column) if refreshed else None
    # The parts the build left alone are the published ones, if all of them are there
    # (split by week, of the same columns).
    before = [p for p in generation.previous if p.table_name == table]
    if only is not None and not (
        before
        and all(
            (table, p.part) in generation.reusable and p.part != WHOLE and p.columns == schema
            for p in before
        )
    ):
        only = None
    summaries = summarise_parts(con, table, column, only)
    if only is not None:
        for p in before:
            if p.part not in only:
                summaries[p.part] = (p.rows, p.checksum)
    if only is None:
        generation.summarised_whole += 1
    keep: dict[str, Part] = {}
    for part, (rows, checksum) in summaries.items():
        old = generation.reusable.get((table, part))
        if old and (old.rows, old.checksum, old.columns) == (rows, checksum, schema):
            keep[part] = old
    wanted = sorted(set(summaries) - set(keep))
    files = (
        write_parts(
            con,
            table,
            columns,
            column,
            wanted,
            generation.staging,
            generation.parts,
            generation.name,
        )
        if wanted
        else {}
    )
    generation.written += len(wanted)
    generation.reused += len(keep)
    mine = [
        keep.get(part) or Part(table, part, *summaries[part], schema, files[part])
        for part in sorted(summaries)
    ]
    generation.current += mine
    view = f"published.{PUBLISHED_SCHEMA}.{quote(table)}"
    con.execute(
        f"create view {view} as "
        + view_sql(con, table, columns, [f for p in mine for f in p.files])
    )
    con.execute(f"comment on view {view} is {literal(parts_comment(schema, mine))}")


def _write_publication(
    con: duckdb.DuckDBPyConnection, settings: Settings, published_at: datetime
) -> None:
    """The `publication` row: when, the newest event and the event count, and the reporting
    currency and time zone the figures are in."""
    newest = con.execute(_newest_event_sql(con)).fetchone()
    con.execute(
        "create table published.main.publication as select "
        "cast(? as timestamp) as published_at, cast(? as timestamp) as newest_event_at, "
        "cast(? as bigint) as events, cast(? as varchar) as reporting_currency, "
        "cast(? as varchar) as timezone",
        [published_at, newest[0], newest[1], settings.reporting_currency, settings.timezone],
    )
