"""Running the installation as a service in a test: `ledger up` on a home, a webhook receiver,
PostgreSQL for the Dagster instance, and a look into the instance's runs.

    with WebhookReceiver() as receiver, LedgerUp(settings, {...}).started() as up:
        up.wait_for(lambda: receiver.bodies, "an alert")
        runs = up.runs("daily_cost_alerts")

Every server is real and binds 127.0.0.1 on a free port. The daemon test (tests/ops/test_ledger_up.py)
proves the schedules and sensors of the code location with these; another schedule is proven the
same way: start `ledger up` with its cron setting on the next minute, wait for its run.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from zoneinfo import ZoneInfo

import psutil

from ledger.core.settings import REPO_ROOT, Settings

# Debian's server binaries (`make postgresql` installs the package): the newest version there.
PG_BIN = max(
    Path("/usr/lib/postgresql").glob("*/bin"),
    key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    default=Path("/usr/lib/postgresql/15/bin"),
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(check: Callable[[], object], what: str, timeout: float = 600.0, every: float = 1.0):
    """Poll `check` until it returns something truthy (and return that); fail naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"waited {timeout:.0f}s for {what}")


def cron_at_next_minute(timezone: str, after_seconds: float) -> tuple[str, datetime]:
    """A daily cron expression for the first whole minute at least `after_seconds` from now in
    `timezone`, and that minute: a schedule that fires once, soon, without waiting for its hour."""
    now = datetime.now(ZoneInfo(timezone))
    at = (now + timedelta(seconds=after_seconds + 59)).replace(second=0, microsecond=0)
    return f"{at.minute} {at.hour} * * *", at


# ---- a webhook receiver ----------------------------------------------------------------------


@dataclass
class WebhookReceiver:
    """A Slack-compatible webhook on 127.0.0.1: keeps each JSON body it is sent, answers 200."""

    bodies: list[dict] = field(default_factory=list)
    url: str = ""

    def __enter__(self) -> WebhookReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.bodies.append(json.loads(body))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/services/T0/B0/hook"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


# ---- PostgreSQL --------------------------------------------------------------------------------


@dataclass
class PostgresServer:
    """Debian's PostgreSQL, run by the `postgres` system user (it refuses to run as root) from
    a temporary data folder, on 127.0.0.1 and a free port; local connections are trusted, so no
    password exists to leak."""

    port: int = 0
    folder: Path | None = None

    def _as_postgres(self, *command: str) -> list[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return [*prefix, *command]

    def start(self) -> PostgresServer:
        self.folder = Path(tempfile.mkdtemp(prefix="ledger-pg-"))
        self.folder.chmod(0o700)
        data, sockets = self.folder / "data", self.folder / "sockets"
        sockets.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
            shutil.chown(sockets, "postgres", "postgres")
        self.port = free_port()
        subprocess.run(
            self._as_postgres(
                str(PG_BIN / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--no-instructions",
            ),
            check=True,
            capture_output=True,
        )
        subprocess.run(
            self._as_postgres(
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(self.folder / "server.log"),
                "-w",
                "-t",
                "60",
                "start",
                "-o",
                f"-h 127.0.0.1 -p {self.port} -k {sockets} -F",
            ),
            check=True,
            capture_output=True,
        )
        return self

    def create_database(self, name: str) -> str:
        """A new empty database; its URL (no password: trust on 127.0.0.1)."""
        subprocess.run(
            self._as_postgres(
                str(PG_BIN / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                name,
            ),
            check=True,
            capture_output=True,
        )
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        if self.folder is None:
            return
        subprocess.run(
            self._as_postgres(
                str(PG_BIN / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop"
            ),
            capture_output=True,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


# ---- `ledger up` ------------------------------------------------------------------------------


@dataclass
class LedgerUp:
    """`ledger up` on `settings.home` in a child process, every port free and chosen here (on
    the first start: a start after a stop takes the same ports again)."""

    settings: Settings
    environment: dict[str, str] = field(default_factory=dict)
    collector_config: Path | None = None
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    def start(self) -> LedgerUp:
        if not self.ports:
            names = ("dagster", "collector", "boards", "pipeline")
            self.ports = {name: free_port() for name in names}
        command = [sys.executable, "-m", "ledger.commands.cli", "up"]
        command += [f"--{name}-port={port}" for name, port in self.ports.items()]
        if self.collector_config is not None:
            command += ["--collector-config", str(self.collector_config)]
        inherited = {
            k: v for k, v in os.environ.items() if not k.startswith(("LEDGER_", "DAGSTER"))
        }
        self.process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env={**inherited, **self.settings.as_environment(), **self.environment},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        return self

    @contextmanager
    def started(self, timeout: float = 300.0) -> Iterator[LedgerUp]:
        self.start()
        try:
            wait_for(self.healthy, "ledger up's /healthz to answer ok", timeout)
            yield self
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()

    def get(self, service: str, path: str) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.ports[service], timeout=10)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def post(self, service: str, path: str, body: bytes, headers: dict) -> tuple[int, dict]:
        connection = http.client.HTTPConnection("127.0.0.1", self.ports[service], timeout=30)
        try:
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            connection.close()

    def healthy(self) -> bool:
        if self.process.poll() is not None:
            output = self.process.stdout.read().decode()
            raise AssertionError(f"ledger up exited with {self.process.returncode}:\n{output}")
        try:
            status, _ = self.get("pipeline", "/healthz")
        except OSError:
            return False
        return status == 200

    def metrics(self, service: str) -> dict[str, float]:
        """The Prometheus samples of `service` (`collector` or `pipeline`), by series."""
        _, body = self.get(service, "/metrics")
        samples = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                series, value = line.rsplit(" ", 1)
                samples[series] = float(value)
        return samples

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children(recursive=True)

    def stop(self, timeout: float = 120.0) -> tuple[int, str]:
        """SIGTERM, as systemd stops it; (exit code, everything it printed)."""
        self.process.send_signal(signal.SIGTERM)
        output, _ = self.process.communicate(timeout=timeout)
        return self.process.returncode, output.decode()

    def runs(self, job_name: str) -> list[tuple[str, dict, dict]]:
        """(status, run config, tags) of the instance's runs of `job_name`, oldest first."""
        from dagster import DagsterInstance, RunsFilter

        # The settings `ledger up` read (a PostgreSQL URL names its driver once read).
        env = Settings.from_env({**self.settings.as_environment(), **self.environment})
        env = env.as_environment()
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # the PostgreSQL instance file names its URL's variable
        try:
            with DagsterInstance.from_config(str(self.settings.dagster_home)) as instance:
                found = instance.get_runs(RunsFilter(job_name=job_name))
                return [(r.status.value, r.run_config, dict(r.tags)) for r in reversed(found)]
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
