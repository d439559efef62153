"""Opening the warehouse, and naming the way out when its file is damaged.

One embedded DuckDB file under `LEDGER_HOME`. DuckDB allows one writing process at a time; readers
that must not contend with the pipeline (the boards) read the published copy instead
(`ledger.serving.published_copy`).
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from ledger.core.sql import literal


def connect(path: Path | str, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse with the session settings every query here assumes."""
    if not read_only:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), read_only=read_only)
    # Timestamps are stored as naive UTC; a session zone other than UTC would shift casts.
    con.execute("set TimeZone = 'UTC'")
    return con


def bound_memory(con: duckdb.DuckDBPyConnection, limit: str, spill_folder: Path) -> None:
    """Cap DuckDB's memory on `con` at `limit`, spilling to `spill_folder` beyond it.

    Left alone, DuckDB's buffer pool may take 80% of the machine and keeps every block it read
    (the deduplication's keys, the raw tables' pages): a long ingest's memory then follows the
    history it reads, not the batch it holds. Capped, blocks are evicted (a persistent database's
    pages are read again from its file) and intermediate results spill to disk."""
    spill_folder.mkdir(parents=True, exist_ok=True)
    con.execute(f"set memory_limit = '{limit}'")
    con.execute(f"set temp_directory = {literal(spill_folder.as_posix())}")


# What DuckDB says when the database file itself is damaged (as opposed to locked or missing).
CORRUPTION_SIGNS = (
    "not a valid duckdb database file",
    "corrupt database file",
    "could not read enough bytes",
    "does not match stored checksum",
)


def mentions_corruption(text: str) -> bool:
    """True when an error's text says a DuckDB file is damaged (a build step's failure, say)."""
    lowered = text.lower()
    return any(sign in lowered for sign in CORRUPTION_SIGNS)


def is_corruption(exc: BaseException) -> bool:
    """True when `exc` says a DuckDB file is damaged; the fix is `ledger recover`."""
    return isinstance(exc, duckdb.Error) and mentions_corruption(str(exc))


_LOCK_CONFLICT = re.compile(r'Could not set lock on file "(?P<path>[^"]*)".*?\(PID (?P<pid>\d+)\)')


def lock_conflict_message(exc: BaseException) -> str | None:
    """One line for DuckDB's refusal to open a file another process has open for writing (a
    build, say), or None when `exc` is not that. The commands that take the home's run lock are
    refused before this happens, naming the run; this covers the ones that only read."""
    if not isinstance(exc, duckdb.Error):
        return None
    found = _LOCK_CONFLICT.search(str(exc))
    if found is None:
        return None
    return (
        f"{found['path']} is open for writing in another process (pid {found['pid']}, a build or "
        "an ingest): wait for it to finish and run this command again"
    )


def raise_if_damaged(path: Path) -> None:
    """Open the warehouse at `path` (if there is one) and read its catalog, so that a damaged file
    stops a command before it starts rather than in the middle of a build's steps. Raises the
    DuckDB error only when it says the file is damaged: a lock held by another run is that run's
    business, reported by whoever waits for it."""
    if not path.exists():
        return
    try:
        with duckdb.connect(str(path), read_only=True) as con:
            con.execute("select count(*) from duckdb_tables()").fetchall()
    except duckdb.Error as exc:
        if is_corruption(exc):
            raise


def corruption_message(exc: BaseException | str, path: Path | str | None = None) -> str:
    """One line naming the damage and the recovery command."""
    first = " ".join(str(exc).strip().split("\n")[0].split())
    where = f"the warehouse {path}" if path else "the warehouse"
    return (
        f"{where} is damaged and cannot be read ({first}); rebuild it from the landing folder "
        "with `ledger recover` (the damaged file is kept aside)"
    )
