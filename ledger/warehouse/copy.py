"""A whole warehouse copied: its database file and the Parquet files of its raw layer."""

from __future__ import annotations

import shutil
from pathlib import Path

from ledger.warehouse.connection import connect
from ledger.warehouse.raw_layout import events_relation_kind, raw_root, refresh_events_view


def copy_warehouse(source: Path, target: Path) -> None:
    """Copy a warehouse: its database file and the Parquet files of its raw layer (the file alone
    is not the whole warehouse). The copy's raw.events reads the copied files."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    with connect(source, read_only=True) as con:
        source_raw = raw_root(con)
    with connect(target) as con:
        target_raw = raw_root(con)
        if source_raw.exists():
            shutil.copytree(source_raw, target_raw, dirs_exist_ok=True)
        if events_relation_kind(con) == "VIEW":
            refresh_events_view(con)
