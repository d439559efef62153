"""The one way readers open the published copy (`settings.published_path`).

Everything people see (boards, alerts, the weekly review, the export) reads the marts of the
published copy, never the warehouse: the copy is replaced atomically after each successful build,
so a reader sees the last good state and never the lock or the half-built tables of a running one.

    with open_published(settings) as con:          # read-only, `marts.*` of the published copy
        con.execute("select count(*) from marts.fct_session_ledger")

    with open_published_with_ops(settings) as con: # alerts and review: they record what they sent
        ...                                        # `marts.*` -> published copy, `ops.*` -> warehouse
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from ledger.core.settings import Settings
from ledger.core.sql import literal
from ledger.warehouse import connect

# The catalog name the published copy is attached under next to the warehouse.
PUBLISHED_CATALOG = "published"


class NotPublishedError(FileNotFoundError):
    """No published copy yet: nothing has been built and published."""


def _require(settings: Settings) -> None:
    if not settings.published_path.exists():
        raise NotPublishedError(
            f"no published copy at {settings.published_path}: run `ledger build` first "
            "(or `ledger simulate` then `ledger build` for sample data)"
        )


def open_published(settings: Settings) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the published copy (session time zone UTC, as stored)."""
    _require(settings)
    return connect(settings.published_path, read_only=True)


@contextmanager
def open_published_with_ops(settings: Settings) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse (for the `ops` state of alerts and reviews) with `marts.*` resolving to the
    published copy, attached read-only.

    DuckDB resolves a schema-qualified name through the search path: `marts` is found in the
    published catalog (the warehouse's own `main` comes first and has no `marts` in it), while
    `ops` and anything created go to the warehouse, the first entry.
    """
    _require(settings)
    con = connect(settings.warehouse_path)
    try:
        con.execute(
            f"attach {literal(str(settings.published_path))} as {PUBLISHED_CATALOG} (read_only)"
        )
        warehouse = con.execute("select current_database()").fetchone()[0]
        con.execute(f"set search_path = {literal(f'{warehouse}.main,{PUBLISHED_CATALOG}.marts')}")
        yield con
    finally:
        con.close()


def has_mart(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether `marts.<name>` exists (a copy built before the mart was added has not got it)."""
    (found,) = con.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'marts' and table_name = ?",
        [name],
    ).fetchone()
    return bool(found)
