"""Where collectors write: rotating JSON-lines files in a landing folder, or the HTTP collector.

Both sinks buffer a bounded number of events and lose nothing on a clean shutdown (`close()`, also
registered with `atexit`). A file is written under a hidden name and renamed when it is complete,
so the ingest never reads half a file; the HTTP sink re-sends a batch until the collector accepts it
(event ids are deterministic, so a batch sent twice deduplicates at ingest), and what the collector
has not accepted when it closes stays in a local spool that the next HTTP sink to the same
collector sends first.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Protocol
from urllib.parse import urlsplit

from ledger.core.durable import fsync_path
from ledger.core.landing import (
    OPEN_SUFFIX,
    OPENING_SUFFIX,
    REJECTED_FOLDER,
    lock_without_waiting,
    recover_folder,
    visible_name,
)


class Sink(Protocol):
    def emit(self, event: dict) -> None: ...

    def close(self) -> None: ...


def _file_stem(prefix: str, sequence: int) -> str:
    now = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{prefix}-{now}-{os.getpid()}-{sequence:06d}"


class FileSink:
    """JSON lines into `folder`, one file per `max_events` events or `max_seconds`, whichever first.

    The open file has a hidden name (`.<name>.jsonl.open`, which the ingest reads only once its
    writer is dead) and is renamed to `<name>.jsonl` when it is closed: by rotation, after
    `idle_seconds` without an event, by `flush()`, `close()` or interpreter exit. Durability is
    bounded: a timer thread writes and fsyncs what was emitted every `sync_seconds` (and a
    `session.ended` event is synced at once), so a kill -9 loses at most the events of the last
    `sync_seconds` or so. The writer holds an exclusive `flock` on its open file; at start, a sink
    makes visible the `.open` files of dead writers in its folder (`recover_folder`), as the ingest
    does.
    """

    def __init__(
        self,
        folder: Path | str,
        prefix: str = "events",
        max_events: int = 10_000,
        max_seconds: float = 60.0,
        sync_seconds: float = 0.5,
        idle_seconds: float = 5.0,
    ) -> None:
        self.folder = Path(folder)
        self.prefix = prefix
        self.max_events = max_events
        self.max_seconds = max_seconds
        self.sync_seconds = sync_seconds
        self.idle_seconds = idle_seconds
        self.files: list[Path] = []
        self.recovered = recover_folder(self.folder)
        self._lock = threading.Lock()
        self._sequence = 0
        self._handle: IO | None = None
        self._open_path: Path | None = None
        self._count = 0
        self._opened_at = 0.0
        self._last_emit = 0.0
        self._dirty = False
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
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
            assert self._handle is not None
            self._handle.write(line + "\n")
            self._count += 1
            self._dirty = True
            self._last_emit = time.monotonic()
            fd = self._flushed_fd() if event.get("event_type") == "session.ended" else None
        _fsync_and_close(fd)

    def sync(self) -> None:
        """Write and fsync what was emitted, keeping the file open."""
        with self._lock:
            fd = self._flushed_fd()
        _fsync_and_close(fd)

    def flush(self) -> None:
        """Close the open file now (renamed, so the ingest sees it); the next event opens another."""
        with self._lock:
            self._close_file()

    def close(self) -> None:
        """Close the open file (renamed, visible) and stop the timer; a later event reopens."""
        with self._lock:
            self._close_file()
            timer, self._timer = self._timer, None
            self._stop.set()
        if timer is not None and timer is not threading.current_thread():
            timer.join()

    def _flushed_fd(self) -> int | None:
        """Under the lock: the buffer written to the file, and a duplicate of its descriptor to
        fsync outside the lock (so `emit` never waits for the disk), or None when nothing is new."""
        if self._handle is None or not self._dirty:
            return None
        self._handle.flush()
        self._dirty = False
        return os.dup(self._handle.fileno())

    def _run_timer(self, stop: threading.Event) -> None:
        """Sync every `sync_seconds`; close the file when idle (then stop: the next file restarts
        it), e.g. for the usage a framework reports after the call ended."""
        while not stop.wait(self.sync_seconds):
            with self._lock:
                now = time.monotonic()
                if self._handle is not None and (
                    now - self._last_emit >= self.idle_seconds
                    or now - self._opened_at >= self.max_seconds
                ):
                    self._close_file()
                fd = self._flushed_fd()
                done = self._handle is None
                if done and self._timer is threading.current_thread():
                    self._timer = None
            _fsync_and_close(fd)
            if done:
                return

    def _open_file(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._sequence += 1
        hidden = f".{_file_stem(self.prefix, self._sequence)}.jsonl"
        opening = self.folder / (hidden + OPENING_SUFFIX)
        handle = opening.open("x", encoding="utf-8")
        lock_without_waiting(handle)  # a new file: nobody else can hold it
        self._open_path = self.folder / (hidden + OPEN_SUFFIX)
        os.replace(opening, self._open_path)
        self._handle = handle
        self._count = 0
        self._opened_at = self._last_emit = time.monotonic()
        if self._timer is None:
            self._stop = threading.Event()
            self._timer = threading.Thread(
                target=self._run_timer, args=(self._stop,), name="ledger-file-sink", daemon=True
            )
            self._timer.start()

    def _close_file(self) -> None:
        if self._handle is None or self._open_path is None:
            return
        self._handle.flush()
        os.fsync(self._handle.fileno())
        final = self._open_path.with_name(visible_name(self._open_path.name))
        # Renamed while still locked: a recovering reader never sees it half closed. Its time is
        # when it appeared (not its last write, up to `idle_seconds` earlier), for watchers of
        # files newer than their last look (the landing sensor).
        os.utime(self._open_path)
        os.replace(self._open_path, final)
        self._handle.close()
        fsync_path(self.folder)
        self.files.append(final)
        self._handle = None
        self._open_path = None
        self._dirty = False


def _fsync_and_close(fd: int | None) -> None:
    if fd is None:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class DeliveryError(RuntimeError):
    """The HTTP collector did not accept some events before the sink had to give up."""


log = logging.getLogger(__name__)


def default_rejected_folder() -> Path:
    """`$LEDGER_HOME/landing/rejected`: never ingested with the landing folder (see `discover`)."""
    from ledger.core.settings import Settings

    return Settings.from_env().landing_dir / REJECTED_FOLDER


def default_spool_folder(url: str) -> Path:
    """`$LEDGER_HOME/spool/<collector host_port>`: one spool per collector, on the agent's disk."""
    from ledger.core.settings import Settings

    where = re.sub(r"[^A-Za-z0-9.-]+", "_", urlsplit(url).netloc) or "collector"
    return Settings.from_env().home / "spool" / where


class HttpSink:
    """Batches of events POSTed to the HTTP collector (`ledger collect serve`) by a worker thread.

    The collector stamps each event with its token's source (SPEC 9: the credential decides it):
    the sink sends events without `source`, so a collector's own default (`pipecat`, `livekit`)
    can never make the collector refuse a batch. The source it learns from the first `202` is
    written into what it spills, so spilled and delivered events share one source.

    While `max_buffered` events wait, `emit` spills to `fallback` or, without one, blocks
    (back-pressure: never an unbounded queue, never a dropped event). A batch still undelivered
    when `close(timeout)` gives up goes to `fallback` (a FileSink, e.g. on a local disk the landing
    folder is synced from) or, without one, to `spool` (a folder; by default
    `$LEDGER_HOME/spool/<collector host_port>`), whose files the next HttpSink to that collector
    sends before anything else and deletes once accepted: a collector down at the end of a call
    loses nothing. A batch the collector refuses for a reason a
    retry cannot fix (400, 401, 403, 413, 415) goes to `rejected` (a FileSink; by default
    `<fallback folder>/rejected`, or `$LEDGER_HOME/landing/rejected` without a fallback), which a
    folder ingest never reads: an operator inspects it and ingests it by name. The first refusal
    of each reason is logged (error level, with the collector's reason), never once per batch.
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
        rejected: FileSink | None = None,
        spool: Path | None = None,
    ) -> None:
        self.url = url.rstrip("/") + "/v1/events" if not url.endswith("/v1/events") else url
        self._token = token
        self.batch_size = batch_size
        self.max_buffered = max_buffered
        self.flush_seconds = flush_seconds
        self.request_timeout = request_timeout
        self.fallback = fallback
        self.rejected = rejected
        self.spool = spool if spool is not None or fallback is not None else None
        if self.spool is None and fallback is None:
            self.spool = default_spool_folder(self.url)
        self.source: str | None = None  # the token's, once the collector said it
        self.delivered = 0
        self.spooled = 0  # events this sink left in the spool at close
        self._spool_waiting = self.spool is not None  # spooled files may wait to be sent
        self.refusals: dict[str, int] = {}  # reason -> events refused for it
        self._buffer: deque[dict] = deque()
        self._in_flight = 0
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
                # Collector unreachable for long: spill, never drop.
                self.fallback.emit(self._stamped(event))
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
        if self.rejected is not None:
            self.rejected.close()
        with self._cond:
            left = list(self._buffer)
            self._buffer.clear()
        if not left:
            return
        if self.fallback is not None:
            for event in left:
                self.fallback.emit(self._stamped(event))
            self.fallback.close()
            return
        if self.spool is not None:
            spooled = FileSink(self.spool, prefix="undelivered")
            for event in left:
                spooled.emit(event)
            spooled.close()
            self.spooled += len(left)
            log.warning(
                "%d events not accepted by %s before the sink closed are spooled in %s; the next "
                "HttpSink to that collector sends them first",
                len(left),
                self.url,
                self.spool,
            )
            return
        raise DeliveryError(f"{len(left)} events were not accepted by {self.url}")

    def _stamped(self, event: dict) -> dict:
        return {**event, "source": self.source} if self.source else event

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
        self._send_spooled()
        while (batch := self._next_batch()) is not None:
            if batch and not self._deliver(batch):
                with self._cond:
                    # Put it back in front: close() hands it to the fallback, in order.
                    self._buffer.extendleft(reversed(batch))
                    return
            if batch and self._spool_waiting:
                self._send_spooled()  # the collector answers again: what waited goes first

    def _send_spooled(self) -> None:
        """Send the spool's files, oldest first, each deleted once every batch of it was accepted
        (or kept apart as refused); stop at the first batch the collector does not take now, to
        try again after the next delivered batch or by the next sink. A file sent twice costs
        nothing: its event ids deduplicate at ingest."""
        if self.spool is None or not self.spool.is_dir():
            self._spool_waiting = False
            return
        for path in sorted(self.spool.glob("*.jsonl")):  # visible: closed, so complete
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except FileNotFoundError:
                continue  # another sink of this collector sent it meanwhile
            events = [json.loads(line) for line in lines if line.strip()]
            for start in range(0, len(events), self.batch_size):
                if self._attempt(events[start : start + self.batch_size]) is None:
                    self._spool_waiting = True
                    return
            path.unlink(missing_ok=True)
        self._spool_waiting = False

    def _deliver(self, batch: list[dict]) -> bool:
        """Send `batch` until the collector takes it (or refuses it for good); False when the sink
        is closing and its time is up."""
        delay = 0.1
        while self._attempt(batch) is None:
            with self._cond:
                if self._give_up_at is not None and time.monotonic() >= self._give_up_at:
                    return False
            time.sleep(delay)
            delay = min(delay * 2, 2.0)
        return True

    def _attempt(self, batch: list[dict]) -> bool | None:
        """One POST of `batch`: True when accepted or kept apart as refused, None when it was not
        taken this time (collector unreachable, busy or failing: worth another try)."""
        # Without `source`: the collector stamps its token's (SPEC 9).
        body = "".join(
            json.dumps({k: v for k, v in e.items() if k != "source"}, separators=(",", ":")) + "\n"
            for e in batch
        ).encode()
        status, answer = self._post(body)
        if status == 202:
            self.delivered += len(batch)
            if self.source is None and isinstance(answer.get("source"), str):
                self.source = answer["source"]
            return True
        if status in (400, 401, 403, 413, 415):
            self._reject(batch, status, answer)
            return True
        return None

    def _reject(self, batch: list[dict], status: int, answer: dict) -> None:
        """Keep a refused batch in the rejected folder; say why the first time for each reason."""
        reason = f"{status} {answer.get('error') or 'refused'}"
        if self.rejected is None:
            folder = (
                self.fallback.folder / REJECTED_FOLDER
                if self.fallback is not None
                else default_rejected_folder()
            )
            self.rejected = FileSink(folder, prefix="rejected")
        for event in batch:
            self.rejected.emit(event)
        self.rejected.sync()
        first = reason not in self.refusals
        self.refusals[reason] = self.refusals.get(reason, 0) + len(batch)
        if first:
            problems = "; ".join(
                str(p.get("reason"))
                for p in (answer.get("problems") or [])[:3]
                if isinstance(p, dict)
            )
            log.error(
                "the collector at %s refused a batch of %d events (%s: %s%s); refused events are "
                "kept in %s, never ingested from there automatically: fix the cause, then ingest "
                "them by name",
                self.url,
                len(batch),
                reason,
                answer.get("detail") or "no detail",
                f"; {problems}" if problems else "",
                self.rejected.folder,
            )

    def _post(self, body: bytes) -> tuple[int, dict]:
        """The status and JSON answer of one POST (status 0: not reached, retry)."""
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
                return response.status, _json_object(response.read())
        except urllib.error.HTTPError as error:
            return error.code, _json_object(error.read())
        except (urllib.error.URLError, OSError):
            return 0, {}  # not reached or connection lost: retry


def _json_object(data: bytes) -> dict:
    try:
        value = json.loads(data or b"null")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
