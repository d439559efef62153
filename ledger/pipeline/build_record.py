"""The last build's outcome, kept in the home: `ledger up`'s `/healthz` says a build failed.

A build runs in `ledger build`'s process or in a run worker of `ledger up`'s daemon; either way
the orchestrator records its end here (dagster_project/defs/build_outcome.py): a step that fails
records the failure, naming the step; a publication records a success (a step after it that fails
records its failure after it). A build killed outright records nothing: the data going stale
then says it (`/healthz`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from ledger.core.durable import write_text_atomically

BUILD_RECORD_FILE = "last_build.json"
# Longest failure message kept: its first lines say what failed.
DETAIL_CHARS = 500


@dataclass(frozen=True)
class BuildRecord:
    succeeded: bool
    finished_at: str  # ISO 8601, UTC
    detail: str | None = None  # the failed step and its error


def record_build(home: Path, succeeded: bool, detail: str | None = None) -> None:
    shown = None if detail is None else " ".join(detail.split())[:DETAIL_CHARS]
    record = BuildRecord(succeeded, datetime.now(UTC).isoformat(timespec="seconds"), shown)
    write_text_atomically(home / BUILD_RECORD_FILE, json.dumps(asdict(record)))


def last_build(home: Path) -> BuildRecord | None:
    """The last build's record; None before the first build that records one."""
    try:
        return BuildRecord(**json.loads((home / BUILD_RECORD_FILE).read_text()))
    except FileNotFoundError:
        return None
