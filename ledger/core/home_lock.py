"""One run at a time per home (SPEC 12): ingest, build, recover and publish take `home/.ledger.lock`.

DuckDB lets one process write the warehouse; two runs on one home would otherwise fail half-way on
its lock (a thousand lines of tracebacks) or, worse, interleave: a second build's ingest and refresh
plan ran between the first build's steps. The lock is an advisory `flock` on a file in the home,
held for the whole run and released by the operating system when the process ends, however it
ends. The file records who holds it (pid, command, since) so a refused run can say so in one line.

    with home_lock(settings.home):            # a command: stops at once if another run holds it
        ...
    with home_lock(settings.home, wait=True): # a scheduled step: waits its turn

Reentrant within a process: `ledger build` holds it, and the ingest and publish it runs take it
again without waiting on themselves.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

LOCK_NAME = ".ledger.lock"

_held: dict[Path, tuple[int, int]] = {}  # home -> (file descriptor, depth), this process
_guard = threading.Lock()


class HomeLocked(RuntimeError):
    """Another run holds the home; the message names it in one line."""


def current_command() -> str:
    """What this process is, for a refused run to read: e.g. `ledger build`."""
    words = [Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python", *sys.argv[1:3]]
    return " ".join(words)[:80]


def holder(home: Path) -> str:
    """Who holds the lock of `home`, as recorded in its lock file ('' when unknown)."""
    try:
        record = json.loads((home / LOCK_NAME).read_text() or "{}")
        return f"pid {record['pid']} (`{record['command']}`), since {record['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


@contextmanager
def home_lock(home: Path, *, wait: bool = False, command: str | None = None) -> Iterator[None]:
    """Hold the home's run lock for the block. Without `wait`, raise `HomeLocked` at once when
    another process holds it; with it, wait for that run to end."""
    home = home.resolve()
    with _guard:
        if home in _held:
            fd, depth = _held[home]
            _held[home] = (fd, depth + 1)
            acquired = False
        else:
            acquired = True
    if not acquired:
        try:
            yield
        finally:
            with _guard:
                fd, depth = _held[home]
                _held[home] = (fd, depth - 1)
        return
    home.mkdir(parents=True, exist_ok=True)
    fd = os.open(home / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                who = holder(home) or "another process"
                raise HomeLocked(
                    f"another ledger run holds {home}: {who}; wait for it to finish (or stop "
                    "it) and run this command again"
                ) from None
            fcntl.flock(fd, fcntl.LOCK_EX)
        record = {
            "pid": os.getpid(),
            "command": command or current_command(),
            "since": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode(), 0)
        with _guard:
            _held[home] = (fd, 1)
        try:
            yield
        finally:
            with _guard:
                del _held[home]
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the descriptor releases the flock
