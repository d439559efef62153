"""What a killed publish leaves behind, and the lock that keeps two publishes apart."""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ledger.core.settings import Settings
from ledger.pipeline.published_parts import parts_dir

LOCK_NAME = ".publish.lock"


@contextmanager
def publish_lock(folder: Path) -> Iterator[None]:
    """One publish at a time per published folder (held across processes until released)."""
    with open(folder / LOCK_NAME, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def staging_name(target: Path) -> str:
    return f".{target.name}."


def remove_leftovers(settings: Settings) -> list[Path]:
    """Delete what a killed publish left behind: its temporary database file (and write-ahead log)
    and its staging folder of parts not yet renamed. Call holding the publish lock."""
    target = settings.published_path
    removed: list[Path] = []
    if not target.parent.exists():
        return removed
    for path in sorted(target.parent.glob(staging_name(target) + "*")):
        if path.name.endswith((".tmp", ".tmp.wal")):
            path.unlink(missing_ok=True)
            removed.append(path)
    parts = parts_dir(settings)
    if parts.exists():
        for path in sorted(parts.glob(".staging-*")):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def remove_publish_leftovers(settings: Settings) -> list[Path]:
    """What a killed publish left behind, removed at the start of a build (waits for a publish
    in progress). Parts no file names are left to the next publish: only it knows which parts
    the previous generation, still open in a reader perhaps, refers to."""
    folder = settings.published_path.parent
    if not folder.exists():
        return []
    with publish_lock(folder):
        return remove_leftovers(settings)
