"""Durable writes, once: a file a reader can see is whole, and it survives a crash once written.

Every writer of a file that something else reads (landing files, raw Parquet, the published copy,
the weekly review, the rate card) writes a hidden temporary in the same folder, flushes it to disk,
renames it over the final name and flushes the folder: a crash leaves the old file or the new one,
never half of one (POSIX: a rename is atomic, and the folder entry is data of the folder).

    write_atomically(path, lambda staged: staged.write_text(text))
    replace_durably(staged_file, final_path)   # for a file or folder written elsewhere
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path


def fsync_path(path: Path | str) -> None:
    """Flush a file's data, or a folder's entries, to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_durably(staged: Path, final: Path, *, sync_staged: bool = True) -> None:
    """Rename `staged` over `final` (same file system) and make the rename durable.

    `sync_staged=False` when the caller already flushed the staged data (a folder of files, each
    synced on its own)."""
    if sync_staged:
        fsync_path(staged)
    os.replace(staged, final)
    fsync_path(final.parent)


def staging_path(path: Path) -> Path:
    """The hidden temporary a write of `path` goes through: same folder (so the rename is atomic),
    unique per process, and hidden so folder scans (the ingest's) never pick it up."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_atomically(path: Path, write: Callable[[Path], None], *, durable: bool = True) -> None:
    """Call `write(staged)` to produce the file at a hidden temporary path, then rename it to
    `path`: a reader sees the old file or the whole new one. With `durable` (the default) the data
    and the rename are flushed to disk; scratch output that is cheaper to redo than to sync (the
    simulator's) passes False."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = staging_path(path)
    try:
        write(staged)
        if durable:
            replace_durably(staged, path)
        else:
            os.replace(staged, path)
    finally:
        staged.unlink(missing_ok=True)


def write_text_atomically(path: Path, text: str) -> None:
    """`write_atomically` for text (UTF-8, newlines as given)."""

    def write(staged: Path) -> None:
        with staged.open("w", encoding="utf-8", newline="") as out:
            out.write(text)

    write_atomically(path, write)


# How the operating system, and DuckDB quoting it, say a write found no room.
_NO_SPACE = "No space left on device"


def disk_full_message(exc: BaseException) -> str | None:
    """One line for a write that failed for want of space (an OSError ENOSPC, or DuckDB's error
    quoting it), or None when `exc` is not that. Every write here leaves the old file or the new
    one and every ingest or build is a transaction, so the line says only what to do."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        where = f" writing {exc.filename}" if exc.filename else ""
    elif not isinstance(exc, OSError) and _NO_SPACE in str(exc):
        where = ""
    else:
        return None
    return (
        f"the disk is full ({_NO_SPACE}{where}): nothing was half-written; free some space and "
        "run the command again"
    )
