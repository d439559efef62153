"""Freshness under steady load (SPEC 14): the time from the collector's `202` to the batch being
visible in the published copy, with everything running as `ledger up` runs it.

    python -m benchmarks.freshness [--rate 100] [--minutes 10] [--batch 50]

1. A base home (`--tenants`, `--days` of simulated traffic) is built once with `ledger build`, so
   the builds under load are incremental, as in production (cached under data/bench/).
2. `ledger up` runs on a copy of it (the daemon, its landing sensor every 30 s, the collector, the
   boards), each on a free port.
3. One client posts contract events at `--rate` events/s, in batches of `--batch`, for
   `--minutes`: complete sessions of a cascade pipeline (ASR, LLM, TTS) happening now.
4. The published copy is polled every second; a batch becomes visible with the publication that
   first lists its landing file, at that publication's `published_at` (the rename that makes it
   visible). Its freshness is `published_at` minus the `202` (the time in its landing file's
   name, ledger/serving/freshness.py).
5. After the load, it waits for every accepted batch to be visible (up to `--drain-minutes`),
   then prints the P50, P95 and maximum, and the builds the daemon ran.

The goal: P95 under 2 minutes at 100 events/s. docs/benchmarks.md quotes the figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ledger.core.settings import REPO_ROOT, Settings

BENCH_DIR = REPO_ROOT / "data" / "bench"
TOKEN = "bench-freshness-token-0123456789"
SOURCE = "gw-bench"
TENANT = "acme-telecom"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def base_home(tenants: int, days: int) -> Path:
    """A simulated and built home, made once and reused (copied) by every run."""
    from dagster_project.pipeline import run_build_job
    from ledger.simulate import simulate

    home = BENCH_DIR / f"freshness-base-{tenants}x{days}"
    if (home / ".complete").exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    settings = Settings(home=home)
    settings.ensure_dirs()
    start = (datetime.now(UTC) - timedelta(days=days + 1)).date()
    simulate(settings.landing_dir, tenants=tenants, days=days, start=start, sessions_per_day=40)
    outcome = run_build_job(settings)
    if not outcome.success:
        raise SystemExit("the base build failed:\n" + "\n".join(outcome.lines))
    (home / ".complete").touch()
    return home


def session_events(at: datetime) -> list[dict]:
    """One short cascade session happening at `at`: 10 events."""
    session = f"fresh-{uuid.uuid4().hex[:16]}"
    stamp = lambda seconds: (at + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # noqa: E731
    base = {"source": SOURCE, "tenant_id": TENANT, "session_id": session}
    usage = [
        ("asr.usage", {"provider": "aliyun", "model": "paraformer-realtime-v2",
                       "audio_seconds": "4.5"}),
        ("llm.usage", {"provider": "deepseek", "model": "deepseek-chat", "input_tokens": 420,
                       "cached_input_tokens": 0, "output_tokens": 60}),
        ("tts.usage", {"provider": "aliyun", "model": "cosyvoice-v2", "characters": 80}),
    ]  # fmt: skip
    events = [
        {**base, "event_id": f"{session}-0", "event_type": "session.started",
         "occurred_at": stamp(0), "scenario": "customer_service", "channel": "pstn",
         "pipeline": "cascade"},
    ]  # fmt: skip
    for turn in range(1, 3):
        for kind, fields in usage:
            number = len(events)
            events.append(
                {**base, "event_id": f"{session}-{number}", "event_type": kind,
                 "occurred_at": stamp(turn * 5), "turn_index": turn, **fields}
            )  # fmt: skip
    events.append(
        {**base, "event_id": f"{session}-9", "event_type": "session.ended",
         "occurred_at": stamp(20), "end_reason": "user_hangup"}
    )  # fmt: skip
    return events


class Load:
    """Posts `rate` events/s in batches of `batch` for `seconds`; keeps each accepted file."""

    def __init__(self, port: int, rate: int, batch: int, seconds: float) -> None:
        self.port, self.rate, self.batch, self.seconds = port, rate, batch, seconds
        self.accepted: dict[str, datetime] = {}  # landing file -> its 202 (from its name)
        self.refused = 0
        self.events = 0

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-ndjson"}
        interval = self.batch / self.rate
        started = time.monotonic()
        pending: list[dict] = []
        sent = 0
        while time.monotonic() - started < self.seconds:
            while len(pending) < self.batch:
                pending += session_events(datetime.now(UTC) - timedelta(seconds=25))
            lines, pending = pending[: self.batch], pending[self.batch :]
            body = "".join(json.dumps(event) + "\n" for event in lines).encode()
            connection.request("POST", "/v1/events", body, headers)
            response = connection.getresponse()
            answer = json.loads(response.read() or b"null")
            if response.status == 202:
                name = answer["file"].rsplit("/", 1)[-1]
                self.accepted[answer["file"]] = datetime.strptime(
                    name.split("Z-")[0], "%Y%m%dT%H%M%S%f"
                )
                self.events += len(lines)
            else:
                self.refused += 1
            sent += 1
            # Steady, not bursty: the next batch leaves on its own schedule.
            time.sleep(max(0.0, started + sent * interval - time.monotonic()))
        connection.close()


def _visible(settings: Settings) -> tuple[datetime | None, list[str]]:
    from ledger.serving.published_copy import open_published

    if not settings.published_path.exists():
        return None, []
    try:
        with open_published(settings) as con:
            (published_at,) = con.execute("select published_at from publication").fetchone()
            paths = con.execute(
                "select path from marts.fct_ingested_files where path like ?",
                [f"%/collector/{SOURCE}/%"],
            ).fetchall()
    except Exception:  # noqa: BLE001 - a copy being swapped in: look again next second
        return None, []
    root = str(settings.landing_dir) + "/"
    return published_at, [path.removeprefix(root) for (path,) in paths]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def run(args: argparse.Namespace) -> dict:
    base = base_home(args.tenants, args.days)
    with tempfile.TemporaryDirectory(prefix="ledger-freshness-", dir=BENCH_DIR) as scratch:
        home = Path(scratch) / "home"
        shutil.copytree(base, home, ignore=shutil.ignore_patterns(".complete", "dagster", "logs"))
        settings = Settings(home=home)
        config = Path(scratch) / "collector.yaml"
        config.write_text(f"sources:\n  {SOURCE}: {{token: {TOKEN}, tenants: [{TENANT}]}}\n")
        ports = {name: _free_port() for name in ("dagster", "collector", "boards", "pipeline")}
        command = [sys.executable, "-m", "ledger.commands.cli", "up", "--collector-config",
                   str(config), *(f"--{name}-port={port}" for name, port in ports.items())]  # fmt: skip
        log = open(Path(scratch) / "up.log", "wb")
        up = subprocess.Popen(
            command, cwd=REPO_ROOT, env={**_env(), **settings.as_environment()},
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            _wait_healthy(ports["pipeline"], up)
            load = Load(ports["collector"], args.rate, args.batch, args.minutes * 60)
            seen: dict[str, datetime] = {}
            loading = threading.Thread(target=load.run)
            load_started = time.monotonic()
            loading.start()
            deadline = None
            while True:
                published_at, paths = _visible(settings)
                for path in paths:
                    if path in load.accepted and path not in seen and published_at is not None:
                        seen[path] = published_at
                if not loading.is_alive():
                    deadline = deadline or time.monotonic() + args.drain_minutes * 60
                    if len(seen) == len(load.accepted) or time.monotonic() > deadline:
                        break
                time.sleep(1.0)
            load_seconds = time.monotonic() - load_started
        finally:
            up.send_signal(signal.SIGTERM)
            up.wait(timeout=120)
            log.close()
        builds = _builds(settings)
    lags = [(seen[path] - load.accepted[path]).total_seconds() for path in seen]
    figures = {
        "rate_events_per_s": args.rate,
        "events_accepted": load.events,
        "batches_accepted": len(load.accepted),
        "batches_refused": load.refused,
        "batches_visible": len(seen),
        "p50_s": statistics.median(lags) if lags else None,
        "p95_s": percentile(lags, 0.95) if lags else None,
        "max_s": max(lags) if lags else None,
        "builds": len(builds),
        "build_median_s": statistics.median(builds) if builds else None,
        "wall_s": round(load_seconds),
    }
    print(
        f"freshness at {args.rate} events/s for {args.minutes} min: {load.events:,} events in "
        f"{len(load.accepted)} batches ({load.refused} refused), {len(seen)} visible; "
        f"202 -> published P50 {figures['p50_s']:.1f}s, P95 {figures['p95_s']:.1f}s, max "
        f"{figures['max_s']:.1f}s; {len(builds)} builds, median {figures['build_median_s']:.1f}s"
    )
    return figures


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("LEDGER_", "DAGSTER"))}


def _wait_healthy(port: int, up: subprocess.Popen, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if up.poll() is not None:
            raise SystemExit(f"ledger up exited with {up.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(1.0)
    raise SystemExit("ledger up did not become healthy")


def _builds(settings: Settings) -> list[float]:
    """Durations of the successful build runs the daemon ran."""
    import os

    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

    os.environ.update(settings.as_environment())
    with DagsterInstance.from_config(str(settings.dagster_home)) as instance:
        records = instance.get_run_records(
            RunsFilter(job_name="build_ledger", statuses=[DagsterRunStatus.SUCCESS])
        )
    return [r.end_time - r.start_time for r in records if r.start_time and r.end_time]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=100, help="events per second")
    parser.add_argument("--batch", type=int, default=50, help="events per POST")
    parser.add_argument("--minutes", type=float, default=10.0, help="minutes of load")
    parser.add_argument("--drain-minutes", type=float, default=10.0)
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument("--days", type=int, default=14)
    args = parser.parse_args()
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    print(json.dumps(run(args), indent=2))


if __name__ == "__main__":
    main()
