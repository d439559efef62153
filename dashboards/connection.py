"""The boards' one connection: read-only, to the published copy of the marts.

The pipeline replaces the published file with an atomic rename after each successful build. The
connection is cached per *version* of that file (inode, mtime, size): a new publish is a new
version, so the next script run opens the new file, while a query already running on the old one
finishes on the old inode undisturbed. Nothing here ever opens the warehouse the pipeline writes.

The file is attached to a private in-memory DuckDB rather than opened with
`duckdb.connect(path, read_only=True)`, for two reasons: DuckDB's Python client reuses an open
database instance for the same path (checked: a reopen after a publish hands back the *old* file
while a connection to it is still open), and a directly opened file's catalog is named after the
file, which can clash with a schema name (`marts.duckdb` vs schema `marts`). Attached under the
fixed name `published`, neither happens.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import duckdb
import pandas as pd
import streamlit as st

from dashboards.sign_in import AccessDenied, current_viewer
from ledger.core.settings import Settings
from ledger.serving.access_file import Viewer

CATALOG = "published"


@dataclass(frozen=True)
class Publication:
    """What the sidebar says about the copy being read."""

    version: str
    published_at: datetime
    newest_event_at: datetime | None
    events: int
    currency: str
    timezone: str
    sessions: int
    first_date: date | None
    last_date: date | None
    # Copies written by `ledger replay` (SPEC 11): the boards leave them out unless asked.
    replay_sessions: int = 0
    # The sidebar's choices: the ledger's distinct tenants, scenarios and pipelines.
    tenants: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    pipelines: tuple[str, ...] = ()


# The sidebar's choice columns of fct_session_ledger, each as a sorted list of its values.
_CHOICES = ("tenant_id", "scenario", "pipeline")


def published_path() -> Path:
    # Read per run, not at import: tests and `ledger serve` point LEDGER_HOME at their own home.
    return Settings.from_env().published_path


def file_version(path: Path) -> str | None:
    """Identity of the published file; None when there is none yet."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return f"{stat.st_ino}-{stat.st_mtime_ns}-{stat.st_size}"


# Marts without a tenant_id column that a reader restricted to some tenants still gets whole: the
# reference data every tenant shares. Any other tenant-free mart reaches them empty.
SHARED_MARTS = frozenset({"dim_latency_budget_owners", "dim_reference_meta"})


@st.cache_resource(max_entries=2, show_spinner=False)
def _open(path: str, version: str) -> duckdb.DuckDBPyConnection:
    # `version` is part of the cache key only: a new publish opens a new connection.
    del version
    con = duckdb.connect(config={"threads": 2})
    con.execute(f"attach '{path.replace(chr(39), chr(39) * 2)}' as {CATALOG} (read_only)")
    return con


@st.cache_resource(max_entries=8, show_spinner=False)
def _open_restricted(
    path: str, version: str, tenants: tuple[str, ...]
) -> duckdb.DuckDBPyConnection:
    """A private in-memory database holding only `tenants`' rows of every mart.

    The published copy is attached, copied table by table (filtered on tenant_id) and detached
    again: nothing on this connection can reach another tenant's rows, whatever a page, a filter
    or a URL asks for.
    """
    del version
    con = duckdb.connect(config={"threads": 2})
    con.execute(f"attach '{path.replace(chr(39), chr(39) * 2)}' as {CATALOG} (read_only)")
    try:
        columns: dict[str, set[str]] = {}
        for table, column in con.execute(
            "select table_name, column_name from information_schema.columns "
            "where table_catalog = ? and table_schema = 'marts'",
            [CATALOG],
        ).fetchall():
            columns.setdefault(table, set()).add(column)
        con.execute("create schema memory.marts")
        for table, names in sorted(columns.items()):
            source = f'{CATALOG}.marts."{table}"'
            if "tenant_id" in names:
                where, params = "list_contains(?::varchar[], tenant_id)", [list(tenants)]
            elif table in SHARED_MARTS:
                where, params = "true", []
            else:
                where, params = "false", []
            con.execute(
                f'create table memory.marts."{table}" as select * from {source} where {where}',
                params,
            )
        # The publication line, with the reader's own events: the warehouse-wide count and
        # newest event would tell them about the other tenants' traffic.
        con.execute(
            "create table memory.main.publication as select published.published_at, "
            "mine.newest_event_at, mine.events, published.reporting_currency, "
            f"published.timezone from {CATALOG}.main.publication as published cross join ("
            "select max(last_event_at) as newest_event_at, "
            "cast(coalesce(sum(event_count), 0) as bigint) as events "
            "from memory.marts.fct_session_ledger) as mine"
        )
    finally:
        con.execute(f"detach {CATALOG}")
    return con


def current_version() -> str | None:
    """The published copy's version as this reader sees it: file identity @ reader's scope.

    Every cached query takes this as its first argument, so a cached answer computed for one
    reader's tenants is never handed to another.
    """
    viewer = _viewer()
    version = file_version(published_path())
    return None if version is None else f"{version}@{viewer.scope}"


def _viewer() -> Viewer:
    viewer = current_viewer()
    if viewer is None:
        raise AccessDenied("this request has no reader the access file grants the boards to")
    return viewer


def fetch(version: str, sql: str, params: list | None) -> tuple[list[str], list[tuple]]:
    """The column names and Python rows of one statement on the reader's view of the published
    copy (DECIMAL stays Decimal).

    The reader comes from the request (dashboards/sign_in.py), never from `version`: a version
    naming another reader's scope is refused. Each call takes its own cursor: Streamlit serves
    sessions from several threads, and a DuckDB cursor is the per-thread handle on the shared
    connection.
    """
    viewer = _viewer()
    file_part, _, scope = version.rpartition("@")
    if scope != viewer.scope:
        raise AccessDenied("this version of the boards belongs to another reader")
    path = str(published_path())
    if viewer.tenants is None:
        connection, catalog = _open(path, file_part), CATALOG
    else:
        connection, catalog = _open_restricted(path, file_part, viewer.tenants), "memory"
    cursor = connection.cursor()
    try:
        cursor.execute(f"use {catalog}")
        cursor.execute(sql, params or [])
        names = [column[0] for column in cursor.description]
        rows = cursor.fetchall()
    finally:
        cursor.close()
    return names, rows


def run(version: str, sql: str, params: list | None = None) -> pd.DataFrame:
    """Run one parameterised statement on the reader's view of the published copy; DECIMAL stays
    Decimal (see `fetch`)."""
    names, rows = fetch(version, sql, params)
    # Built from Python rows (not .df()) so money columns stay exact Decimal objects.
    return pd.DataFrame.from_records(rows, columns=names)


def run_parts(
    version: str, sql: str, params: list | None, parts: dict[str, frozenset[str]]
) -> dict[str, pd.DataFrame]:
    """Several answers from one statement (one round trip instead of one per answer).

    `sql`'s first column names the answer a row belongs to; `parts` maps each answer to the
    columns it has not got (the rest, in the statement's order, it has). Each frame is built from
    its own rows only, exactly as if its statement had run alone.
    """
    names, rows = fetch(version, sql, params)
    frames = {}
    for part, absent in parts.items():
        positions = [i for i, name in enumerate(names) if i > 0 and name not in absent]
        frames[part] = pd.DataFrame.from_records(
            [tuple(row[i] for i in positions) for row in rows if row[0] == part],
            columns=[names[i] for i in positions],
        )
    return frames


@st.cache_data(ttl=60, max_entries=8, show_spinner=False)
def publication(version: str) -> Publication | None:
    """The publication record, or None when the copy has no sessions to show."""
    try:
        # One statement for everything the sidebar shows: the publication row, the ledger's span
        # and its tenants, scenarios and pipelines (each round trip on a fresh connection costs).
        choices = "".join(
            f", list_sort(list(distinct {c}) filter (where {c} is not null)) as choice_{c}"
            for c in _CHOICES
        )
        meta = run(
            version,
            # The default period follows recorded traffic: replayed copies may be shifted anywhere.
            "select publication.*, span.* from main.publication cross join ("
            "select count(*) as sessions, count(*) filter (where is_replay) as replay_sessions, "
            "coalesce(min(business_date) filter (where not is_replay), min(business_date)) "
            "as first_date, "
            "coalesce(max(business_date) filter (where not is_replay), max(business_date)) "
            f"as last_date{choices} "
            "from marts.fct_session_ledger) as span",
        )
    except duckdb.CatalogException:
        # A copy published before any model existed: treat it as empty.
        return None
    if meta.empty or int(meta.at[0, "sessions"]) == 0:
        return None
    row = meta.iloc[0]
    return Publication(
        version=version,
        published_at=row["published_at"].to_pydatetime(),
        newest_event_at=None
        if pd.isna(row["newest_event_at"])
        else row["newest_event_at"].to_pydatetime(),
        events=int(row["events"]),
        currency=str(row["reporting_currency"]),
        timezone=str(row["timezone"]),
        sessions=int(row["sessions"]),
        first_date=row["first_date"],
        last_date=row["last_date"],
        replay_sessions=int(row["replay_sessions"]),
        tenants=tuple(row["choice_tenant_id"]),
        scenarios=tuple(row["choice_scenario"]),
        pipelines=tuple(row["choice_pipeline"]),
    )
