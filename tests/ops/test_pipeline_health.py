"""`ledger up`'s `/healthz` tells the truth about the pipeline (issue 39): degraded after a failed
build (naming the step and its error) and when acknowledged data waits too long for a
publication; ok again once a build succeeds."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import ledger.commands.up as up
from ledger.commands.cli import main
from ledger.commands.up import STALE_AFTER_SECONDS, Ports, Supervisor, pipeline_health
from ledger.core.settings import REPO_ROOT, Settings
from tests.support.events import llm, write_jsonl
from tests.support.services import free_port


def _healthz(port: int) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_healthz_is_degraded_after_a_failed_build_and_ok_after_a_good_one(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    reference.mkdir()  # no reference data: the build's reference step fails
    environment = {"LEDGER_HOME": str(tmp_path / "home"), "LEDGER_REFERENCE_DIR": str(reference)}
    settings = Settings.from_env(environment)
    supervisor = Supervisor(settings, [], Ports(pipeline=free_port()), echo=lambda _: None)
    supervisor.serve_health()
    try:
        assert _healthz(supervisor.ports.pipeline) == (
            200,
            {
                "status": "ok",
                "services": {},
                "build_failed": False,
                "last_build": None,
                "data": {"stale": False, "published_at": None, "oldest_unpublished_file_at": None},
                "undelivered_notifications": {},
            },
        )

        failed = CliRunner().invoke(main, ["build"], env=environment)

        assert failed.exit_code == 1
        status, body = _healthz(supervisor.ports.pipeline)
        assert (status, body["status"], body["build_failed"]) == (503, "degraded", True)
        assert body["last_build"]["succeeded"] is False
        assert body["last_build"]["detail"].startswith(
            f"step reference_tables: ReferenceDataError: reference data in {reference} is "
            "invalid (4 problems)"
        )

        shutil.copytree(REPO_ROOT / "data" / "reference", reference, dirs_exist_ok=True)
        built = CliRunner().invoke(main, ["build"], env=environment)

        assert built.exit_code == 0, built.output
        status, body = _healthz(supervisor.ports.pipeline)
        assert (status, body["status"], body["build_failed"]) == (200, "ok", False)
        assert body["last_build"]["succeeded"] is True
        assert body["last_build"]["detail"] is None
    finally:
        supervisor.health_server.shutdown()
        supervisor.health_server.server_close()


def test_data_waiting_longer_than_the_limit_for_a_publication_is_stale(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    landing = settings.landing_dir
    waiting = write_jsonl(landing / "collector" / "gw-1" / "batch.jsonl", [llm("1")])
    # Files that never count: hidden (being written), refused batches, not a landing file.
    for ignored in (".batch.jsonl.tmp", "rejected/refused.jsonl", "notes.txt"):
        write_jsonl(landing / ignored, [llm("2")])
    now = time.time()
    written = now - STALE_AFTER_SECONDS - 60
    for path in landing.rglob("*"):
        if path.is_file():
            os.utime(path, (written - 3600, written - 3600))
    os.utime(waiting, (written, written))

    health = pipeline_health(settings, now=now)
    fresh = pipeline_health(settings, now=written + STALE_AFTER_SECONDS)

    assert health["data"]["stale"] is True
    assert health["data"]["oldest_unpublished_file_at"] == time.strftime(
        "%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(int(written))
    )
    assert fresh["data"]["stale"] is False


def test_a_client_that_stalls_is_disconnected_and_never_holds_healthz(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(up, "CLIENT_TIMEOUT_SECONDS", 1.0)
    supervisor = Supervisor(
        Settings(home=tmp_path / "home"), [], Ports(pipeline=free_port()), echo=lambda _: None
    )
    supervisor.serve_health()
    try:
        with socket.create_connection(("127.0.0.1", supervisor.ports.pipeline)) as slow:
            slow.sendall(b"GET /healthz HTTP/1.1\r\n")  # and never the rest of its headers
            assert _healthz(supervisor.ports.pipeline)[0] == 200  # others are answered meanwhile
            slow.settimeout(60)  # a bound for the test, far above the server's timeout
            assert slow.recv(1024) == b""  # closed by the server
    finally:
        supervisor.health_server.shutdown()
        supervisor.health_server.server_close()
