"""Ingest landing files into the warehouse's raw layer (SPEC section 3)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ledger.ingest.files import discover
from ledger.ingest.load import FileResult, load_file
from ledger.settings import Settings
from ledger.warehouse import connect, ensure_raw_schema

__all__ = ["FileResult", "ingest_paths"]


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
    with connect(settings.warehouse_path) as con:
        ensure_raw_schema(con)
        for path in files:
            result = load_file(con, path, ingest_time=ingest_time)
            results.append(result)
            if on_file is not None:
                on_file(result)
    return results
