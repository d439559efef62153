"""The HTTP collector's Prometheus metrics (`GET /metrics`, SPEC 14).

| metric | labels | meaning |
|---|---|---|
| `ledger_collector_events_accepted_total` | `source` | events in batches answered `202` |
| `ledger_collector_batches_accepted_total` | `source` | batches answered `202` |
| `ledger_collector_requests_refused_total` | `reason` | requests refused, by the error code answered |
| `ledger_collector_batch_seconds` | | time from a request's arrival to its `202` (the fsyncs included) |
| `ledger_collector_active_sessions` | `pool` | sessions started and not yet ended, per pool |

The pools are the ones capacity planning sizes (SPEC 11, seed 8.2): `asr_tts` holds a path per
session of the cascade pipeline, `realtime` one per end-to-end realtime session. A session counts
from its `session.started` to its `session.ended` as this collector saw them; one whose end never
came is forgotten after `SESSION_EXPIRY_SECONDS`. Each collector process counts its own traffic
(in memory: a restart starts from zero, as Prometheus counters expect).
"""

from __future__ import annotations

import json
import threading
import time

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

POOLS = {"cascade": "asr_tts", "realtime": "realtime"}
SESSION_EXPIRY_SECONDS = 4 * 3600.0
BATCH_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class CollectorMetrics:
    def __init__(self) -> None:
        # A registry per app: tests (and a process) may build several collectors.
        self.registry = CollectorRegistry(auto_describe=True)
        self.events = Counter(
            "ledger_collector_events_accepted",
            "Events in batches answered 202",
            ["source"],
            registry=self.registry,
        )
        self.batches = Counter(
            "ledger_collector_batches_accepted",
            "Batches answered 202",
            ["source"],
            registry=self.registry,
        )
        self.refused = Counter(
            "ledger_collector_requests_refused",
            "Requests refused, by the error code answered",
            ["reason"],
            registry=self.registry,
        )
        self.batch_seconds = Histogram(
            "ledger_collector_batch_seconds",
            "Seconds from a request's arrival to its 202",
            buckets=BATCH_BUCKETS,
            registry=self.registry,
        )
        self.active = Gauge(
            "ledger_collector_active_sessions",
            "Sessions started and not yet ended, per capacity pool",
            ["pool"],
            registry=self.registry,
        )
        for pool in POOLS.values():
            self.active.labels(pool).set(0)
        self._open: dict[tuple[str, str], tuple[str, float]] = {}  # (source, session) -> pool
        self._guard = threading.Lock()

    def accepted(self, source: str, lines: list[str], seconds: float) -> None:
        self.events.labels(source).inc(len(lines))
        self.batches.labels(source).inc()
        self.batch_seconds.observe(seconds)
        # Only session boundaries move the gauge; most lines are usage and are not parsed again.
        marks = [line for line in lines if '"session.started"' in line or '"session.ended"' in line]
        if marks:
            self._track(source, marks)

    def refusal(self, reason: str) -> None:
        self.refused.labels(reason).inc()

    def _track(self, source: str, lines: list[str]) -> None:
        now = time.monotonic()
        with self._guard:
            for line in lines:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                key = (source, str(event.get("session_id")))
                kind = event.get("event_type")
                if kind == "session.started" and event.get("pipeline") in POOLS:
                    self._open[key] = (POOLS[event["pipeline"]], now)
                elif kind == "session.ended":
                    self._open.pop(key, None)
            for key, (_, since) in list(self._open.items()):
                if now - since > SESSION_EXPIRY_SECONDS:
                    del self._open[key]
            counts = dict.fromkeys(POOLS.values(), 0)
            for pool, _ in self._open.values():
                counts[pool] += 1
        for pool, count in counts.items():
            self.active.labels(pool).set(count)

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
