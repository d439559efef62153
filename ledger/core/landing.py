"""The landing folder's writer convention, shared by the writers (ledger/collect) and the ingest.

A writer keeps the file it is filling under a hidden name and renames it when complete, so the
ingest never reads half a file. `FileSink` holds an exclusive `flock` on its open file
(`.<name>.jsonl.open`): an open file whose lock can be taken has no live writer, and its complete
lines are made visible by whoever finds it first, the next `FileSink` on that folder or the ingest.
Batches the HTTP collector refused are kept in `rejected/` folders, which the ingest never searches
on its own.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from ledger.core.durable import fsync_path, write_atomically

REJECTED_FOLDER = "rejected"


def write_landing_file(folder: Path, name: str, lines: Iterable[str]) -> Path:
    """Write `lines` to `folder/name` durably, through the hidden temporary of
    `ledger.core.durable` (`.<name>.<pid>.tmp`), synced, renamed and the folder synced."""
    final = folder / name

    def write(staged: Path) -> None:
        with staged.open("w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line)
                handle.write("\n")

    write_atomically(final, write)
    return final


OPEN_SUFFIX = ".open"
# A file being created: renamed to its `.open` name only once its writer holds the lock, so an
# `.open` file whose lock can be taken has no live writer.
OPENING_SUFFIX = ".opening"


def lock_without_waiting(handle: IO) -> bool:
    """Take the exclusive lock on `handle`'s file without waiting; False when another holds it."""
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def visible_name(hidden: str) -> str:
    """`.<name>.jsonl.open` -> `<name>.jsonl`, the name the ingest reads."""
    return hidden[1 : -len(OPEN_SUFFIX)]


def is_open_file(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(".jsonl" + OPEN_SUFFIX)


def recover_abandoned(path: Path) -> Path | None:
    """Make the `.open` file a dead writer left visible; None if its writer is alive (or it is gone).

    Liveness is the writer's lock (`flock`, released by the kernel when the process dies however it
    dies, and immune to pid reuse). Complete lines are kept as they are; a line the writer was
    cutting when it died stays as the file's last line, and the ingest quarantines it as
    `malformed_json`. An empty file is removed.
    """
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return None
    with handle:
        if not lock_without_waiting(handle):
            return None  # a live writer holds it
        if not path.exists():
            return None  # its writer closed it between our open and our lock
        if os.fstat(handle.fileno()).st_size == 0:
            path.unlink()
            return None
        final = path.with_name(visible_name(path.name))
        os.replace(path, final)
        # Now is when it appeared: a watcher that looks for files newer than its last look sees it.
        os.utime(final)
    fsync_path(path.parent)
    return final


def recover_folder(folder: Path) -> list[Path]:
    """`recover_abandoned` for every `.open` file directly in `folder`; the files made visible."""
    if not folder.is_dir():
        return []
    recovered = []
    for path in sorted(folder.iterdir()):
        if is_open_file(path) and not path.is_symlink():
            final = recover_abandoned(path)
            if final is not None:
                recovered.append(final)
    return recovered
