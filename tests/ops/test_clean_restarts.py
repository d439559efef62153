"""Services that restart cleanly (issue 39): a port a stopped server left in TIME_WAIT is free to
the next `ledger up`, and a `ledger serve` killed with SIGKILL takes its Streamlit server with it
(an orphan would hold the boards' port against every restart)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import psutil

from ledger.commands.up import answers, port_taken
from ledger.core.settings import REPO_ROOT, Settings
from tests.support.services import LedgerUp, free_port, wait_for


def _closing_on(ports: set[int]) -> set[int]:
    """Of `ports`, those with a connection in TIME_WAIT on this machine."""
    return {
        c.laddr.port
        for c in psutil.net_connections("tcp")
        if c.status == psutil.CONN_TIME_WAIT and c.laddr.port in ports
    }


def test_a_port_whose_server_closed_its_connections_is_free(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert port_taken("127.0.0.1", port)  # a program listens: taken
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = server.accept()
            accepted.close()  # the server closes first: its side waits in TIME_WAIT
            client.recv(1)
    assert _closing_on({port}) == {port}

    assert not port_taken("127.0.0.1", port)


def test_ledger_up_starts_again_at_once_after_a_clean_stop(tmp_path: Path) -> None:
    # (an owner team's webhook that cannot be used is said at start; the others would go on)
    owners = {"LEDGER_OWNER_WEBHOOKS": "audio=ftp://hooks.example.com/s3cret"}
    up = LedgerUp(Settings(home=tmp_path / "home"), owners)
    with up.started():
        # (every /healthz answered closes from the server's side: TIME_WAIT on its port)
        code, output = up.stop()
    assert code == 0, output
    assert (
        "alerts: LEDGER_OWNER_WEBHOOKS entry 'audio' must be an http:// or https:// URL (it has "
        "scheme 'ftp'; the URL is not shown, it holds the webhook's secret); its alerts are kept "
        "until it is fixed\n"
    ) in output
    assert "s3cret" not in output
    assert up.ports["pipeline"] in _closing_on(set(up.ports.values()))

    with up.started():  # the same ports, at once
        code, output = up.stop()

    assert code == 0, output
    assert "taken by another program" not in output


def test_a_killed_ledger_serve_takes_its_boards_server_with_it(tmp_path: Path) -> None:
    port = free_port()
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
    serve = subprocess.Popen(
        [sys.executable, "-m", "ledger.commands.cli", "serve", "--port", str(port)],
        cwd=REPO_ROOT,
        env={**inherited, "LEDGER_HOME": str(tmp_path / "home")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started: list[psutil.Process] = []
    try:
        started += wait_for(
            lambda: psutil.Process(serve.pid).children(), "ledger serve to start Streamlit", 60
        )
        wait_for(lambda: answers(f"http://127.0.0.1:{port}/_stcore/health"), "the boards", 120)

        serve.send_signal(signal.SIGKILL)
        serve.wait()

        [streamlit] = started
        streamlit.wait(timeout=60)  # ended by its parent's death (or psutil.TimeoutExpired)
        assert not streamlit.is_running()
        assert not port_taken("127.0.0.1", port)
    finally:
        for process in started:  # an orphan, should one be left
            if process.is_running():
                process.kill()
        if serve.poll() is None:
            serve.kill()
            serve.wait()
