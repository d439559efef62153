"""A real Spark cluster on loopback for the Spark tests: a standalone master, one worker and a Spark
Connect server in front of them, each its own JVM (the worker starts the executors as further
processes), started from the pyspark distribution the requirements pin.

    with loopback_spark_cluster(folder, warehouse_dir=...) as cluster:
        settings = settings.model_copy(update={"spark_remote": cluster.remote})
        ...                                   # dbt's `spark_connect` target talks to it
        cluster.applications()                # what the master ran
    cluster.leftovers()                       # [] : every process of the cluster has ended

The daemons run in the foreground under this process (no `sbin/` pid files to chase): SIGTERM in
reverse order of start (the worker ends its executors), then SIGKILL for whatever outlived 60 s.
Logs are under `folder/logs/`; a start that fails raises with the tail of the failed daemon's log.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from ledger.pipeline.spark import CONNECT_SERVER_CONF, LOG4J_PROPERTIES
from tests.support.browser import free_port

SPARK_HOME = Path(pyspark.__file__).resolve().parent
CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
# Sizes for a shared 2-core machine: one executor of both cores.
WORKER_CORES, WORKER_MEMORY, EXECUTOR_MEMORY, DRIVER_MEMORY = 2, "1536m", "1g", "1g"
STOP_TIMEOUT_S = 60


@dataclass
class LoopbackSparkCluster:
    folder: Path
    master_port: int = field(default_factory=free_port)
    master_ui_port: int = field(default_factory=free_port)
    worker_port: int = field(default_factory=free_port)
    worker_ui_port: int = field(default_factory=free_port)
    connect_port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def remote(self) -> str:
        """The Spark Connect address (LEDGER_SPARK_REMOTE)."""
        return f"sc://127.0.0.1:{self.connect_port}"

    @property
    def work_dir(self) -> Path:
        """The worker's folder: one `<application>/<executor>/` folder per executor it ran."""
        return self.folder / "work"

    def master_state(self) -> dict:
        """The standalone master's own account of its workers and applications (its JSON page)."""
        url = f"http://127.0.0.1:{self.master_ui_port}/json/"
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)

    def applications(self) -> list[dict]:
        state = self.master_state()
        return state["activeapps"] + state["completedapps"]

    def leftovers(self) -> list[int]:
        """Pids of processes still serving this cluster: a daemon, or an executor (whose command
        line names its worker)."""
        marks = [f"127.0.0.1:{port}".encode() for port in (self.master_port, self.worker_port)]
        marks.append(f"spark.connect.grpc.binding.port={self.connect_port}".encode())
        found = {process.pid for process in self.processes.values() if process.poll() is None}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    command = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                if b"java" in command and any(mark in command for mark in marks):
                    found.add(int(entry.name))
        return sorted(found)

    # ---- start and stop ----------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        log4j = f"-Dlog4j2.configurationFile=file:{LOG4J_PROPERTIES}"
        return {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_LOCAL_IP": "127.0.0.1",  # every socket, web pages included, on loopback
            "SPARK_DAEMON_MEMORY": "512m",
            "SPARK_DAEMON_JAVA_OPTS": log4j,
            "SPARK_CONF_DIR": str(self.folder / "conf"),  # none of the machine's own settings
            "LEDGER_SPARK_LOG_LEVEL": os.environ.get("LEDGER_SPARK_LOG_LEVEL", "WARN"),
        }

    def _start(self, name: str, command: list[str]) -> subprocess.Popen:
        logs = self.folder / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with (logs / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(
                command,
                env=self._environment(),
                cwd=self.folder,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.processes[name] = process
        return process

    def _wait(self, name: str, ready) -> None:
        # Until it answers or exits: a start on a loaded machine may take minutes, and a hang
        # is failed by the per-test timeout (pyproject.toml) with every thread's stack.
        process = self.processes[name]
        while process.poll() is None:
            try:
                if ready():
                    return
            except OSError:
                pass
            time.sleep(0.5)
        tail = (self.folder / "logs" / f"{name}.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"the Spark {name} did not start (exit {process.poll()}):\n{tail}")

    def _listening(self, port: int) -> bool:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True

    def start(self, warehouse_dir: Path) -> None:
        (self.folder / "conf").mkdir(parents=True, exist_ok=True)
        spark_class = str(SPARK_HOME / "bin" / "spark-class")
        self._start(
            "master",
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(self.master_port), "--webui-port", str(self.master_ui_port)],
        )  # fmt: skip
        self._wait("master", lambda: "aliveworkers" in self.master_state())
        self._start(
            "worker",
            [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
             "--port", str(self.worker_port), "--webui-port", str(self.worker_ui_port),
             "--cores", str(WORKER_CORES), "--memory", WORKER_MEMORY,
             "--work-dir", str(self.work_dir), self.master_url],
        )  # fmt: skip
        self._wait("worker", lambda: self.master_state()["aliveworkers"] == 1)
        conf = {
            **CONNECT_SERVER_CONF,
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.connect_port),
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.memory": DRIVER_MEMORY,
            "spark.executor.memory": EXECUTOR_MEMORY,
            "spark.ui.enabled": "false",
            "spark.sql.warehouse.dir": str(warehouse_dir),
            "spark.executor.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG4J_PROPERTIES}",
            "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{LOG4J_PROPERTIES}",
        }
        self._start(
            "connect",
            [str(SPARK_HOME / "bin" / "spark-submit"), "--class", CONNECT_SERVER_CLASS,
             "--name", "voice-ledger-connect", "--master", self.master_url,
             *(f"--conf={key}={value}" for key, value in conf.items())],
        )  # fmt: skip
        self._wait("connect", lambda: self._listening(self.connect_port))

    def stop(self) -> None:
        """SIGTERM to each daemon, newest first; SIGKILL to what outlives STOP_TIMEOUT_S."""
        for name in reversed(list(self.processes)):
            process = self.processes[name]
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while self.leftovers() and time.monotonic() < deadline:
            time.sleep(0.5)
        for pid in self.leftovers():
            os.kill(pid, signal.SIGKILL)


@contextmanager
def loopback_spark_cluster(folder: Path, *, warehouse_dir: Path) -> Iterator[LoopbackSparkCluster]:
    """A started cluster (see the module's docstring), stopped on the way out whatever happened.
    `warehouse_dir`: the server's `spark.sql.warehouse.dir` (where `create database` puts its
    folders)."""
    cluster = LoopbackSparkCluster(folder)
    try:
        cluster.start(warehouse_dir)
        yield cluster
    finally:
        cluster.stop()
