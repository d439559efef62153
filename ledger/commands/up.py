"""`ledger up`: every service of an installation, started and supervised as one (SPEC 14).

| service     | what                                  | default address  | health              |
|-------------|---------------------------------------|------------------|---------------------|
| `daemon`    | `dagster-daemon run`: sensor, schedules, the run queue | -   | the supervisor's `/healthz` |
| `webserver` | `dagster-webserver`: the Dagster UI   | 127.0.0.1:3000   | `/server_info`      |
| `collector` | `ledger collect serve` (with `--collector-config`) | 127.0.0.1:8787 | `/healthz`, `/metrics` |
| `boards`    | `ledger serve`: the Streamlit boards  | 127.0.0.1:8501   | `/_stcore/health`   |
| `pipeline`  | this process: health and pipeline metrics | 127.0.0.1:9108 | `/healthz`, `/metrics` |

`/healthz` is degraded (503) when a service is down, the last build failed
(ledger/pipeline/build_record.py), acknowledged data waits too long for a publication or an alert
notification is not delivered yet.

The Dagster instance is persistent, under `$LEDGER_HOME/dagster` (ledger/commands/instance.py).
Each child writes its own log file under `$LEDGER_HOME/logs/`, runs in a process group of its own
(a daemon's run workers and the boards' Streamlit server stop with it) and is started again, after
a pause that grows, when it dies. SIGTERM or SIGINT stops every child and then this process.

It refuses to start, with one line, when a port is taken, another `ledger up` runs on the home
or another ledger run holds the home's lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO

from ledger.alerts.routing import router_for
from ledger.core.child_process import ends_with_this_process
from ledger.core.home_lock import HomeLocked, home_lock
from ledger.core.settings import REPO_ROOT, Settings

LOCALHOST = "127.0.0.1"
UP_LOCK = ".ledger-up.lock"
# A child that dies is started again after this many seconds, doubled each time, up to the cap.
RESTART_PAUSE, RESTART_PAUSE_MAX = 2.0, 60.0
# How long the children have to stop on SIGTERM before they are killed.
STOP_GRACE_SECONDS = 30.0
# A client of the pipeline port that sends nothing for this long is disconnected: a slow or idle
# connection must not hold a thread of the health server forever.
CLIENT_TIMEOUT_SECONDS = 10.0
# A landing file waiting this long for a publication makes `/healthz` degraded: the sensor starts
# a build within a minute of it, and a build publishes it within minutes.
STALE_AFTER_SECONDS = 15 * 60


class UpRefused(RuntimeError):
    """`ledger up` cannot start: one line saying why."""


@dataclass(frozen=True)
class Ports:
    """Where each service listens. `host` is the collector's and the boards' address (another
    address than this machine needs the boards' access file); the Dagster UI and the pipeline's
    health and metrics stay on 127.0.0.1 (put a proxy in front to reach them from elsewhere)."""

    host: str = LOCALHOST
    dagster: int = 3000
    collector: int = 8787
    boards: int = 8501
    pipeline: int = 9108


@dataclass
class Service:
    name: str
    command: list[str]
    address: tuple[str, int] | None  # where it listens, None for the daemon
    health_path: str = ""
    process: subprocess.Popen | None = None
    log: IO | None = None
    restarts: int = 0
    restart_at: float = 0.0
    started_at: float = field(default_factory=time.monotonic)

    @property
    def url(self) -> str:
        if self.address is None:
            return ""
        host, port = self.address
        return f"http://{'localhost' if host == LOCALHOST else host}:{port}"


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def ledger_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "ledger.commands.cli", *args]


def plan_services(settings: Settings, ports: Ports, collector_config: Path | None) -> list[Service]:
    """The children `ledger up` runs; the collector only with a credentials file."""
    workspace = str(settings.dagster_home / "workspace.yaml")
    services = [
        # JSON log lines: a log file is read by tools (journald, Loki) more than by eye, and the
        # default colours would write escape codes into it.
        Service(
            "daemon", [_bin("dagster-daemon"), "run", "-w", workspace, "--log-format", "json"], None
        ),
        Service(
            "webserver",
            [
                *(_bin("dagster-webserver"), "-h", LOCALHOST, "-p", str(ports.dagster)),
                *("-w", workspace, "--log-format", "json"),
            ],
            (LOCALHOST, ports.dagster),
            "/server_info",
        ),
    ]
    if collector_config is not None:
        services.append(
            Service(
                "collector",
                ledger_command(
                    "collect",
                    "serve",
                    "--config",
                    str(collector_config),
                    "--host",
                    ports.host,
                    "--port",
                    str(ports.collector),
                ),
                (ports.host, ports.collector),
                "/healthz",
            )
        )
    services.append(
        Service(
            "boards",
            ledger_command("serve", "--port", str(ports.boards), "--address", ports.host),
            (ports.host, ports.boards),
            "/_stcore/health",
        )
    )
    return services


def port_taken(host: str, port: int) -> bool:
    """Whether a program listens on `host`:`port`. Connections a stopped server left closing
    (TIME_WAIT, about a minute) do not count: the servers bind with SO_REUSEADDR, so the probe
    does too."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def check_ports(services: list[Service], ports: Ports) -> None:
    wanted = [(s.name, s.address) for s in services if s.address] + [
        ("pipeline", (LOCALHOST, ports.pipeline))
    ]
    flags = {"webserver": "--dagster-port", "pipeline": "--pipeline-port"}
    for name, (host, port) in wanted:
        if port_taken(host, port):
            flag = flags.get(name, f"--{name}-port")
            raise UpRefused(
                f"port {port} on {host} (the {name}) is taken by another program: stop it or "
                f"choose another port with `ledger up {flag} N`"
            )


def _up_lock(settings: Settings) -> int:
    """Hold `home/.ledger-up.lock` for this process's life: one `ledger up` per home."""
    settings.home.mkdir(parents=True, exist_ok=True)
    path = settings.home / UP_LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        other = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise UpRefused(
            f"another `ledger up` (pid {other}) already runs on {settings.home}: stop it first"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def check_home_free(settings: Settings) -> None:
    """Refuse while another ledger run (a `ledger build`, a restore) holds the home."""
    try:
        with home_lock(settings.home, command="ledger up (start)"):
            pass
    except HomeLocked as exc:
        raise UpRefused(str(exc)) from None


def child_environment(settings: Settings) -> dict[str, str]:
    """Every child's environment: this one, the settings (whatever set them), the instance."""
    return {
        **os.environ,
        **settings.as_environment(),
        "DAGSTER_HOME": str(settings.dagster_home),
        "PYTHONUNBUFFERED": "1",
    }


class Supervisor:
    def __init__(
        self,
        settings: Settings,
        services: list[Service],
        ports: Ports,
        echo: Callable[[str], None] = print,
    ) -> None:
        self.settings, self.services, self.ports, self.echo = settings, services, ports, echo
        self.stopping = threading.Event()
        self.environment = child_environment(settings)
        self.health_server: ThreadingHTTPServer | None = None

    # ---- children ---------------------------------------------------------------------------

    def start(self, service: Service) -> None:
        self.settings.logs_dir.mkdir(parents=True, exist_ok=True)
        if service.log is None:
            service.log = open(self.settings.logs_dir / f"{service.name}.log", "ab")
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        service.log.write(f"---- {stamp} ledger up starts {service.name}\n".encode())
        service.log.flush()
        service.process = subprocess.Popen(
            service.command,
            cwd=REPO_ROOT,
            env=self.environment,
            stdin=subprocess.DEVNULL,
            stdout=service.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=ends_with_this_process(),
        )
        service.started_at = time.monotonic()

    def watch(self) -> None:
        """Start again any child that died, after a pause that doubles with each restart."""
        now = time.monotonic()
        for service in self.services:
            process = service.process
            if process is None or process.poll() is None:
                if process is None and now >= service.restart_at:
                    self.start(service)
                continue
            log = self.settings.logs_dir / f"{service.name}.log"
            pause = min(RESTART_PAUSE * 2**service.restarts, RESTART_PAUSE_MAX)
            if now - service.started_at > 10 * RESTART_PAUSE_MAX:
                pause = RESTART_PAUSE  # it had run a good while: not a crash loop
            self.echo(
                f"{service.name} stopped (exit code {process.returncode}, see {log}); "
                f"starting it again in {pause:.0f}s"
            )
            service.process, service.restarts = None, service.restarts + 1
            service.restart_at = now + pause

    def stop(self) -> None:
        """SIGTERM to every child's process group, SIGKILL to what is left after the grace."""
        running = [s for s in self.services if s.process and s.process.poll() is None]
        for service in running:
            with suppress(ProcessLookupError):
                os.killpg(service.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for service in running:
            try:
                service.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.echo(f"{service.name} did not stop in {STOP_GRACE_SECONDS:.0f}s: killed")
            # What the group still holds (a run worker, a code server) goes now.
            with suppress(ProcessLookupError):
                os.killpg(service.process.pid, signal.SIGKILL)
            service.process.wait()
        for service in self.services:
            if service.log is not None:
                service.log.close()

    # ---- health -------------------------------------------------------------------------------

    def health(self) -> dict:
        """Each service: running (and answering its health address, when it has one); the last
        build's outcome, and whether acknowledged data waits too long for a publication."""
        report = {}
        for service in self.services:
            running = service.process is not None and service.process.poll() is None
            entry = {"running": running, "restarts": service.restarts}
            if running and service.address is not None:
                entry["url"] = service.url
                entry["answering"] = answers(service.url + service.health_path)
            report[service.name] = entry
        healthy = all(e["running"] and e.get("answering", True) for e in report.values())
        pipeline = pipeline_health(self.settings)
        healthy = (
            healthy
            and not pipeline["build_failed"]
            and not pipeline["data"]["stale"]
            and not any(pipeline["undelivered_notifications"].values())
        )
        return {"status": "ok" if healthy else "degraded", "services": report, **pipeline}

    def serve_health(self) -> None:
        from ledger.commands.pipeline_metrics import metrics_text

        supervisor = self

        class Handler(BaseHTTPRequestHandler):
            timeout = CLIENT_TIMEOUT_SECONDS  # each connection's socket

            def do_GET(self) -> None:
                if self.path == "/healthz":
                    report = supervisor.health()
                    body = json.dumps(report).encode()
                    status, kind = (200 if report["status"] == "ok" else 503), "application/json"
                elif self.path == "/metrics":
                    body, kind = metrics_text(supervisor.settings)
                    status = 200
                else:
                    body, status, kind = b"not found\n", 404, "text/plain"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # a scrape every 15 seconds is not worth a log line

        self.health_server = ThreadingHTTPServer((LOCALHOST, self.ports.pipeline), Handler)
        self.health_server.timeout = 5
        threading.Thread(target=self.health_server.serve_forever, daemon=True).start()

    # ---- the whole ----------------------------------------------------------------------------

    def run(self) -> None:
        self.serve_health()
        for service in self.services:
            self.start(service)
        self.echo(f"ledger up on {self.settings.home} (logs in {self.settings.logs_dir})")
        for service in self.services:
            if service.address is not None:
                self.echo(f"  {service.name:<10} {service.url}")
        self.echo(f"  {'pipeline':<10} http://localhost:{self.ports.pipeline}/healthz, /metrics")
        self.echo("SIGTERM or Ctrl-C stops everything")
        try:
            while not self.stopping.wait(1.0):
                self.watch()
        finally:
            self.echo("stopping: " + ", ".join(s.name for s in self.services))
            self.stop()
            if self.health_server is not None:
                self.health_server.shutdown()
                self.health_server.server_close()
            self.echo("stopped")


def pipeline_health(settings: Settings, now: float | None = None) -> dict:
    """The last build (failed or not, and why), the data (stale when a landing file written
    after the last publication has waited more than STALE_AFTER_SECONDS; `now`: Unix time) and
    the alert notifications not delivered yet, per kind, as of the last alert run."""
    from ledger.alerts.store import read_undelivered
    from ledger.ingest.files import oldest_landing_file_after
    from ledger.pipeline.build_record import last_build

    now = time.time() if now is None else now
    build = last_build(settings.home)
    published = _published_at(settings)
    waiting = (
        oldest_landing_file_after(settings.landing_dir, published or 0.0)
        if settings.landing_dir.is_dir()
        else None
    )
    return {
        "build_failed": build is not None and not build.succeeded,
        "last_build": None if build is None else asdict(build),
        "data": {
            "stale": waiting is not None and now - waiting > STALE_AFTER_SECONDS,
            "published_at": _iso(published),
            "oldest_unpublished_file_at": _iso(waiting),
        },
        "undelivered_notifications": read_undelivered(settings.alerts_dir) or {},
    }


def _published_at(settings: Settings) -> float | None:
    """When the published copy was written (Unix time); None without a readable one."""
    import duckdb

    from ledger.serving.published_copy import NotPublishedError, open_published

    try:
        with open_published(settings) as con:
            (published_at,) = con.execute("select published_at from publication").fetchone()
    except (NotPublishedError, duckdb.Error):
        return None
    return published_at.replace(tzinfo=UTC).timestamp()  # kept as naive UTC


def _iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def up(
    settings: Settings,
    ports: Ports,
    collector_config: Path | None,
    echo: Callable[[str], None] = print,
) -> None:
    """Check, prepare the instance, then run every service until SIGTERM or SIGINT."""
    from ledger.commands.instance import prepare_instance

    lock = _up_lock(settings)
    try:
        check_home_free(settings)
        services = plan_services(settings, ports, collector_config)
        check_ports(services, ports)
        settings.ensure_dirs()
        # The PostgreSQL instance file names its URL's variable: Dagster reads it from here too.
        os.environ.update(settings.as_environment())
        prepare_instance(settings)
        if collector_config is None:
            echo("collector not started: no credentials file (--collector-config)")
        # Said at start, not only by the first build that has an alert for it: the alerts of a
        # destination that cannot be used are kept until it is fixed, the others go out.
        for unusable in router_for(settings, echo=None).unusable:
            echo(f"alerts: {unusable}; its alerts are kept until it is fixed")
        supervisor = Supervisor(settings, services, ports, echo)

        def _stop(signum: int, frame: object) -> None:
            supervisor.stopping.set()

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        supervisor.run()
    finally:
        os.close(lock)
