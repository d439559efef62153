"""Ingest landing files into the warehouse's raw layer (SPEC section 3)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from itertools import islice
from pathlib import Path

import duckdb

from ledger.ingest.files import discover
from ledger.ingest.load import FileResult, StagedFile, commit_staged, stage_file
from ledger.settings import Settings
from ledger.warehouse import connect, ensure_raw_schema

__all__ = ["FileResult", "ingest_paths"]

# DuckDB parallelises a query across row groups; one landing file is often a single row group, so
# files are validated side by side instead.
STAGING_THREADS = max(2, os.cpu_count() or 2)
STAGING_WINDOW = STAGING_THREADS + 1
# DuckDB checkpoints when the write-ahead log passes 16 MB by default, i.e. after nearly every landing
# file, rewriting the table each time. A larger threshold checkpoints once per many files (and at the
# end); each file is still committed, and durable, through the log.
INGEST_CHECKPOINT_THRESHOLD = "1GB"


def ingest_paths(
    settings: Settings,
    paths: list[Path],
    *,
    ingest_time: datetime | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    on_start: Callable[[list[Path]], None] | None = None,
) -> list[FileResult]:
    """Ingest every landing file under `paths`, one transaction per file, in path order."""
    files = discover(paths)
    if on_start is not None:
        on_start(files)
    results = []
    with connect(settings.warehouse_path) as con, ThreadPoolExecutor(STAGING_THREADS) as pool:
        ensure_raw_schema(con)
        con.execute(f"set checkpoint_threshold = '{INGEST_CHECKPOINT_THRESHOLD}'")
        try:
            _ingest_in_order(con, pool, files, results, ingest_time, on_file)
        finally:
            con.execute("reset checkpoint_threshold")
        con.execute("checkpoint")
    return results


def _ingest_in_order(
    con: duckdb.DuckDBPyConnection,
    pool: ThreadPoolExecutor,
    files: list[Path],
    results: list[FileResult],
    ingest_time: datetime | None,
    on_file: Callable[[FileResult], None] | None,
) -> None:
    """Stage files ahead on the pool, commit them one by one in path order."""

    def stage(path: Path) -> tuple[duckdb.DuckDBPyConnection, StagedFile]:
        cursor = con.cursor()
        return cursor, stage_file(cursor, path, ingest_time=ingest_time)

    # Validation (the expensive part) runs ahead on other cursors while files commit one at a
    # time in path order, so "the first version wins" stays deterministic. The window bounds
    # how many staged files wait in memory.
    pending: deque[Future] = deque()
    queue = iter(files)
    for path in islice(queue, STAGING_WINDOW):
        pending.append(pool.submit(stage, path))
    while pending:
        cursor, staged = pending.popleft().result()
        next_path = next(queue, None)
        if next_path is not None:
            pending.append(pool.submit(stage, next_path))
        try:
            result = commit_staged(cursor, staged)
        finally:
            cursor.close()
        results.append(result)
        if on_file is not None:
            on_file(result)
