"""The DuckDB warehouse file: opening it (and naming the way out when it is corrupt), the raw
layer's tables and Parquet files that ingest writes, and a consistent copy for scratch work.

The modules not named above:

- `connection`: opening the warehouse, and naming the way out when its file is damaged.
- `copy`: a whole warehouse copied: its database file and the Parquet files of its raw layer.
- `event_files`: the raw layer's Parquet files.
- `raw_layout`: the raw layer's shape.
- `raw_schema`: creating the raw layer, and migrating a warehouse from before the Parquet layer.
"""

from ledger.warehouse.connection import (
    bound_memory,
    connect,
    corruption_message,
    is_corruption,
    lock_conflict_message,
    mentions_corruption,
    raise_if_damaged,
)
from ledger.warehouse.copy import copy_warehouse
from ledger.warehouse.event_files import append_events, land_events, remove_orphan_event_files
from ledger.warehouse.raw_layout import KEY_HASH, raw_root, refresh_events_view
from ledger.warehouse.raw_schema import complete_event_files, ensure_raw_schema

__all__ = [
    "KEY_HASH",
    "append_events",
    "bound_memory",
    "complete_event_files",
    "connect",
    "copy_warehouse",
    "corruption_message",
    "ensure_raw_schema",
    "is_corruption",
    "land_events",
    "lock_conflict_message",
    "mentions_corruption",
    "raise_if_damaged",
    "raw_root",
    "refresh_events_view",
    "remove_orphan_event_files",
]
