"""The Parquet parts of the published marts: how a table is split (ISO weeks of its date column, or
one part), how a part's content is summarised (rows and a checksum, computed in DuckDB), writing
parts, listing the parts a published file names, the views over them, and removing parts no
generation names. `ledger/pipeline/publish.py` puts these together into one publish."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import duckdb

from ledger.core.durable import fsync_path, replace_durably
from ledger.core.settings import Settings
from ledger.core.sql import identifier, literal

# The one schema readers may name: everything people see is computed in a mart (the boards, the
# alerts, the weekly review and the export read nothing else), so nothing else is published.
PUBLISHED_SCHEMA = "marts"
# The date column a table is split by, the first one it has (its ISO week names the part).
PART_DATE_COLUMNS = ("business_date", "x_business_date", "usage_date", "week_start_date")
WHOLE = "all"
PARTS_DIR = "parts"
# Parquet has no 128-bit integer (DuckDB would write DOUBLE): such columns go as DECIMAL(38, 0),
# exact, and the view casts every column back to its type in the warehouse.
PARQUET_SAFE = {"HUGEINT": "DECIMAL(38,0)", "UHUGEINT": "DECIMAL(38,0)"}
# The alerts' and the weekly review's records (`ops`, written by `ledger alerts run` and `ledger
# report weekly`, never by dbt) published next to the marts under these names, so the boards'
# anomaly inbox and restatements read the published copy like every page.
OPS_TABLES = {
    "alert_anomalies": "anomalies",
    "alert_rate_card_drifts": "rate_card_drifts",
    "review_restatements": "restatements",
}
OPS_SCHEMA = "ops"
# The marts the session explorer looks up by session id (dashboards/queries/sessions.py). Each of
# their parts is written in session order, so Parquet's min/max statistics of `session_id` let a
# lookup skip every row group but the one that can hold the session, where rows in build order
# make it read the whole column of every part. Nothing else bounds a session's usage lines: they
# are split by their own date, and a line may precede the session's start.
SESSION_ORDERED = frozenset(
    {"fct_usage_lines", "fct_turn_latency", "fct_interruptions", "fct_degradations"}
)
SESSION_ORDER = "session_id"


def source_of(table: str) -> str:
    """The warehouse relation a published table is copied from."""
    if table in OPS_TABLES:
        return f"warehouse.{OPS_SCHEMA}.{quote(OPS_TABLES[table])}"
    return f"warehouse.{PUBLISHED_SCHEMA}.{quote(table)}"


@dataclass(frozen=True)
class Part:
    """One Parquet part of a published table and the summary of its content."""

    table_name: str
    part: str
    rows: int
    checksum: str
    columns: str  # the table's `layout`: a change of schema or order rewrites every part
    files: tuple[str, ...]  # absolute paths


def parts_dir(settings: Settings) -> Path:
    return settings.published_path.parent / PARTS_DIR


quote = identifier  # the name the publish code has always used


def mart_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    found = con.execute(
        "select table_name from information_schema.tables where table_catalog = 'warehouse' "
        "and table_schema = ? and table_type in ('BASE TABLE', 'VIEW') order by 1",
        [PUBLISHED_SCHEMA],
    ).fetchall()
    return [name for (name,) in found]


def ops_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The ops tables the warehouse has (none before the first alert run or review)."""
    found = {
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_catalog = 'warehouse' "
            "and table_schema = ?",
            [OPS_SCHEMA],
        ).fetchall()
    }
    return sorted(table for table, name in OPS_TABLES.items() if name in found)


def mart_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]]:
    schema, name = (
        (OPS_SCHEMA, OPS_TABLES[table]) if table in OPS_TABLES else (PUBLISHED_SCHEMA, table)
    )
    return con.execute(
        "select column_name, data_type from duckdb_columns() where database_name = 'warehouse' "
        "and schema_name = ? and table_name = ? order by column_index",
        [schema, name],
    ).fetchall()


def layout(table: str, columns: list[tuple[str, str]]) -> str:
    """What a part's files are beside its content: the table's "name type, ..." and, for a
    session-ordered table, its order (a change of either rewrites every part of the table)."""
    schema = ", ".join(f"{name} {kind}" for name, kind in columns)
    if sort_key(table, columns):
        schema += f" order by {SESSION_ORDER}"
    return schema


def sort_key(table: str, columns: list[tuple[str, str]]) -> str | None:
    """The column a table's parts are written in the order of (None: the build's order)."""
    if table in SESSION_ORDERED and any(name == SESSION_ORDER for name, _ in columns):
        return SESSION_ORDER
    return None


def part_column(columns: list[tuple[str, str]], rows: int, whole_below: int) -> str | None:
    """The date column whose ISO week names the part of each row (None: one part for all)."""
    if rows < whole_below:
        return None
    dates = {name for name, kind in columns if kind == "DATE"}
    return next((name for name in PART_DATE_COLUMNS if name in dates), None)


def part_expression(column: str | None) -> str:
    """SQL naming the part of each row of a table: its ISO week, or one part for all of it."""
    if column is None:
        return literal(WHOLE)
    return f"coalesce(strftime({quote(column)}, '%G-W%V'), 'none')"


def week_label(monday: date) -> str:
    year, week, _ = monday.isocalendar()
    return f"{year}-W{week:02d}"


def parts_filter(column: str, parts: set[str]) -> str:
    """A condition that keeps the rows of `parts` of a table split by `column`, as ranges of the
    column (so that DuckDB can skip the row groups outside them) and the part names."""
    ranges = []
    for part in sorted(parts - {"none"}):
        year, week = part.split("-W")
        monday = date.fromisocalendar(int(year), int(week), 1)
        ranges.append(
            f"({quote(column)} >= {literal(monday)} "
            f"and {quote(column)} < {literal(monday + timedelta(days=7))})"
        )
    if "none" in parts:
        ranges.append(f"{quote(column)} is null")
    return "(" + (" or ".join(ranges) or "false") + ")"


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


def parts_comment(columns: str, parts: list[Part]) -> str:
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


def summarise_parts(
    con: duckdb.DuckDBPyConnection,
    table: str,
    column: str | None,
    only: set[str] | None = None,
) -> dict[str, tuple[int, str]]:
    """Each part's (rows, checksum) of `table` split by `column`, computed in DuckDB: every part,
    or the parts `only`."""
    source = source_of(table)
    where = "" if only is None or column is None else f" where {parts_filter(column, only)}"
    summaries = con.execute(
        f"select {part_expression(column)} as part, count(*), cast(sum(hash(t)) as varchar) "
        f"from {source} t{where} group by all"
    ).fetchall()
    # (Grouping an empty table by a constant still gives one group, of no rows: not a part.)
    return {part: (n, checksum) for part, n, checksum in summaries if n}


def write_parts(
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
    source = source_of(table)
    projection = ", ".join(
        f"cast({quote(name)} as {PARQUET_SAFE[kind]}) as {quote(name)}"
        if kind in PARQUET_SAFE
        else quote(name)
        for name, kind in columns
    )
    folder = staging / table
    folder.mkdir(parents=True, exist_ok=True)
    order = sort_key(table, columns)
    if order is None:
        expression = part_expression(column)
        where = "true" if column is None else parts_filter(column, set(wanted))
        con.execute(
            f"copy (select {projection}, {expression} as __ledger_part from {source} "
            f"where {where}) to {literal(str(folder))} "
            "(format parquet, compression zstd, partition_by (__ledger_part), overwrite_or_ignore)"
        )
    else:
        # One statement per part: a partitioned write does not keep its input's order, and a
        # part at a time bounds the sort's memory to one week of the table.
        for part in wanted:
            made = folder / f"__ledger_part={part}"
            made.mkdir()
            where = "true" if column is None else parts_filter(column, {part})
            con.execute(
                f"copy (select {projection} from {source} where {where} "
                f"order by {quote(order)}) to {literal(str(made / 'data_0.parquet'))} "
                "(format parquet, compression zstd)"
            )
    written: dict[str, tuple[str, ...]] = {}
    for part in wanted:
        made = folder / f"__ledger_part={part}"
        final = parts / table / f"{part}.{generation}"
        final.parent.mkdir(parents=True, exist_ok=True)
        files = sorted(made.glob("*.parquet"))
        for path in files:
            fsync_path(path)
        replace_durably(made, final, sync_staged=False)
        written[part] = tuple(str(final / path.name) for path in files)
    return written


def view_sql(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[tuple[str, str]], files: list[str]
) -> str:
    """`marts.<table>` over its parts, every column cast back to its warehouse type."""
    if not files:
        nulls = ", ".join(f"cast(null as {kind}) as {quote(name)}" for name, kind in columns)
        return f"select {nulls} where false"
    listing = "[" + ", ".join(literal(path) for path in files) + "]"
    reader = f"read_parquet({listing}, hive_partitioning = false)"
    stored = dict(
        con.execute(
            f"select column_name, column_type from (describe select * from {reader})"
        ).fetchall()
    )
    projection = ", ".join(
        quote(name)
        if stored.get(name) == kind
        else f"cast({quote(name)} as {kind}) as {quote(name)}"
        for name, kind in columns
    )
    return f"select {projection} from {reader}"


def remove_unreferenced(parts: Path, current: list[Part], previous: list[Part]) -> int:
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
