"""Where collectors write: rotating JSON-lines files in a landing folder, or the HTTP collector.

Both sinks buffer a bounded number of events and lose nothing on a clean shutdown (`close()`, also
registered with `atexit`). A file is written under a hidden name and renamed when it is complete,
so the ingest never reads half a file; the HTTP sink re-sends a batch until the collector accepts it
(event ids are deterministic, so a batch sent twice deduplicates at ingest).
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol


class Sink(Protocol):
    def emit(self, event: dict) -> None: ...

    def close(self) -> None: ...


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (POSIX: the directory entry is data of the directory)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_landing_file(folder: Path, name: str, lines: Iterable[str]) -> Path:
    """Write `lines` to `folder/name` durably: hidden temporary name, fsync, rename, fsync folder."""
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / name
    temporary = folder / f".{name}.tmp"
    with temporary.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, final)
    fsync_dir(folder)
    return final


def _file_stem(prefix: str, sequence: int) -> str:
    now = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{prefix}-{now}-{os.getpid()}-{sequence:06d}"


class FileSink:
    """JSON lines into `folder`, one file per `max_events` events or `max_seconds`, whichever first.

    The open file has a hidden name (`.<name>.jsonl.open`, which the ingest skips) and is renamed to
    `<name>.jsonl` when it is closed: by rotation, `flush()`, `close()` or interpreter exit.
    """

    def __init__(
        self,
        folder: Path | str,
        prefix: str = "events",
        max_events: int = 10_000,
        max_seconds: float = 60.0,
    ) -> None:
        self.folder = Path(folder)
        self.prefix = prefix
        self.max_events = max_events
        self.max_seconds = max_seconds
        self.files: list[Path] = []
        self._lock = threading.Lock()
        self._sequence = 0
        self._handle = None
        self._open_path: Path | None = None
        self._count = 0
        self._opened_at = 0.0
        atexit.register(self.close)

    def emit(self, event: dict) -> None:
        line = json.dumps(event, separators=(",", ":"))
        with self._lock:
            if self._handle is not None and (
                self._count >= self.max_events
                or time.monotonic() - self._opened_at >= self.max_seconds
            ):
                self._close_file()
            if self._handle is None:
                self._open_file()
            self._handle.write(line + "\n")
            self._count += 1

    def flush(self) -> None:
        """Close the open file now (renamed, so the ingest sees it); the next event opens another."""
        with self._lock:
            self._close_file()

    def close(self) -> None:
        self.flush()

    def _open_file(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._sequence += 1
        self._open_path = self.folder / f".{_file_stem(self.prefix, self._sequence)}.jsonl.open"
        self._handle = self._open_path.open("w", encoding="utf-8")
        self._count = 0
        self._opened_at = time.monotonic()

    def _close_file(self) -> None:
        if self._handle is None or self._open_path is None:
            return
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        final = self._open_path.with_name(self._open_path.name[1 : -len(".open")])
        os.replace(self._open_path, final)
        fsync_dir(self.folder)
        self.files.append(final)
        self._handle = None
        self._open_path = None


class DeliveryError(RuntimeError):
    """The HTTP collector did not accept some events before the sink had to give up."""


class HttpSink:
    """Batches of events POSTed to the HTTP collector (`ledger collect serve`) by a worker thread.

    While `max_buffered` events wait, `emit` spills to `fallback` or, without one, blocks
    (back-pressure: never an unbounded queue, never a dropped event). A batch the collector refuses for a reason that a retry cannot fix (400, 401,
    413, 415) or that is still undelivered when `close(timeout)` gives up goes to `fallback` (a
    FileSink, e.g. on a local disk the landing folder is synced from) or raises `DeliveryError`.
    """

    def __init__(
        self,
        url: str,
        token: str,
        batch_size: int = 500,
        max_buffered: int = 10_000,
        flush_seconds: float = 1.0,
        request_timeout: float = 10.0,
        fallback: FileSink | None = None,
    ) -> None:
        self.url = url.rstrip("/") + "/v1/events" if not url.endswith("/v1/events") else url
        self._token = token
        self.batch_size = batch_size
        self.max_buffered = max_buffered
        self.flush_seconds = flush_seconds
        self.request_timeout = request_timeout
        self.fallback = fallback
        self.delivered = 0
        self._buffer: deque[dict] = deque()
        self._in_flight = 0
        self._refused: list[dict] = []
        self._closing = False
        self._give_up_at: float | None = None
        self._cond = threading.Condition()
        self._worker = threading.Thread(target=self._run, name="ledger-http-sink", daemon=True)
        self._worker.start()
        atexit.register(self.close)

    def emit(self, event: dict) -> None:
        with self._cond:
            if self._closing:
                raise DeliveryError("the sink is closed")
            if len(self._buffer) >= self.max_buffered and self.fallback is not None:
                self.fallback.emit(event)  # collector unreachable for long: spill, never drop
                return
            while len(self._buffer) >= self.max_buffered:
                self._cond.wait()
            self._buffer.append(event)
            if len(self._buffer) >= self.batch_size:
                self._cond.notify_all()

    def close(self, timeout: float = 30.0) -> None:
        """Send everything buffered; what is still undelivered after `timeout` s is not dropped."""
        with self._cond:
            if self._closing and not self._worker.is_alive():
                return
            self._closing = True
            self._give_up_at = time.monotonic() + timeout
            self._cond.notify_all()
        self._worker.join(timeout + self.request_timeout + 1)
        with self._cond:
            left = list(self._buffer) + self._refused
            self._buffer.clear()
            self._refused = []
        if not left:
            return
        if self.fallback is not None:
            for event in left:
                self.fallback.emit(event)
            self.fallback.close()
            return
        raise DeliveryError(f"{len(left)} events were not accepted by {self.url}")

    def _next_batch(self) -> list[dict] | None:
        with self._cond:
            deadline = time.monotonic() + self.flush_seconds
            while not self._closing and len(self._buffer) < self.batch_size:
                remaining = deadline - time.monotonic()
                if remaining <= 0 and self._buffer:
                    break
                self._cond.wait(max(remaining, 0.05))
            if not self._buffer:
                return None if self._closing else []
            batch = [self._buffer.popleft() for _ in range(min(self.batch_size, len(self._buffer)))]
            self._in_flight = len(batch)
            self._cond.notify_all()
            return batch

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            if batch and not self._deliver(batch):
                with self._cond:
                    # Put it back in front: close() hands it to the fallback, in order.
                    self._buffer.extendleft(reversed(batch))
                    return

    def _deliver(self, batch: list[dict]) -> bool:
        body = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in batch).encode()
        delay = 0.1
        while True:
            status = self._post(body)
            if status == 202:
                self.delivered += len(batch)
                return True
            if status in (400, 401, 403, 413, 415):
                with self._cond:
                    self._refused.extend(batch)
                return True
            with self._cond:
                if self._give_up_at is not None and time.monotonic() >= self._give_up_at:
                    return False
            time.sleep(delay)
            delay = min(delay * 2, 2.0)

    def _post(self, body: bytes) -> int:
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={
                "Authorization": f"Bearer {self._token}",
                "Content-Type": "application/x-ndjson",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.request_timeout) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code
        except (urllib.error.URLError, OSError):
            return 0  # not reached or connection lost: retry
