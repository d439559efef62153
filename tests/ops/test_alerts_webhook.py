"""The alert webhook as an operator and a receiver meet it (issue 13, point 8): the URL checked at
start without ever being repeated, credentials kept out of the terminal and `ops.deliveries`, a
failed delivery failing the command, every attempt counted, and one idempotency key per
notification across all its attempts. A real HTTP server on localhost receives; on
`ops_template_home`'s 2026-11-20 exactly one notification goes out (bright-bank's LLM cost).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import duckdb
import pytest
from click.testing import CliRunner

from ledger.alerts.delivery import WebhookSink, WebhookURLError
from ledger.commands.cli import main
from ledger.core.settings import Settings

SECRETS = ("pa55word", "t0ken123", "k3yPath")


@dataclass
class Hook:
    port: int
    statuses: list[int] = field(default_factory=list)  # answers in order, then 200
    requests: list[dict] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://alice:pa55word@127.0.0.1:{self.port}/hooks/k3yPath?token=t0ken123"


@pytest.fixture
def hook() -> Iterator[Hook]:
    state = Hook(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            state.requests.append(
                {
                    "path": self.path,
                    "key": self.headers["Idempotency-Key"],
                    "authorization": self.headers["Authorization"],
                }
            )
            status = state.statuses.pop(0) if state.statuses else 200
            self.send_response(status)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def _alerts(settings: Settings, url: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LEDGER_HOME", str(settings.home))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(settings.reference_dir))
    monkeypatch.setenv("LEDGER_WEBHOOK_URL", url)
    return CliRunner().invoke(main, ["alerts", "run", "--date", "2026-11-20"])


def _deliveries(settings: Settings) -> list[tuple]:
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        return con.execute(
            "select delivery_id, status, attempts, last_error from ops.deliveries"
        ).fetchall()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("hooks.example.com/services/k3yPath?token=t0ken123", "no scheme"),
        ("file:///etc/k3yPath?token=t0ken123", "scheme 'file'"),
        ("ftp://alice:pa55word@example.com/k3yPath", "scheme 'ftp'"),
        ("https://alice:pa55word@/k3yPath", None),
        ("https://alice:pa55word@example.com:port/k3yPath", None),
    ],
)
def test_an_unusable_webhook_url_is_refused_at_start_without_repeating_it(
    tmp_path, monkeypatch: pytest.MonkeyPatch, url: str, shown: str | None
):
    settings = Settings(home=tmp_path, reference_dir=tmp_path)
    result = _alerts(settings, url, monkeypatch)

    assert result.exit_code == 1, result.output
    assert "Error: LEDGER_WEBHOOK_URL" in result.output
    if shown:
        assert f"must be an http:// or https:// URL (it has {shown};" in result.output
    else:
        assert "has no valid host[:port]" in result.output
    assert "Traceback" not in result.output
    for secret in (*SECRETS, "/etc", "example.com"):
        assert secret not in result.output
    with pytest.raises(WebhookURLError):
        WebhookSink(url)


def test_credentials_become_basic_auth_and_one_key_marks_every_attempt(
    ops_settings: Settings, hook: Hook, monkeypatch: pytest.MonkeyPatch
):
    hook.statuses = [500, 502]  # the third attempt of the run goes through
    result = _alerts(ops_settings, hook.url, monkeypatch)

    assert result.exit_code == 0, result.output
    assert f"notifications: webhook at 127.0.0.1:{hook.port};" in result.output
    [(delivery_id, status, attempts, last_error)] = _deliveries(ops_settings)
    assert (status, attempts, last_error) == ("sent", 3, None)
    basic = "Basic " + base64.b64encode(b"alice:pa55word").decode()
    assert (
        hook.requests
        == [{"path": "/hooks/k3yPath?token=t0ken123", "key": delivery_id, "authorization": basic}]
        * 3
    )
    for secret in SECRETS:
        assert secret not in result.output


def test_a_failed_delivery_fails_the_command_and_its_retry_keeps_the_key(
    ops_settings: Settings, hook: Hook, monkeypatch: pytest.MonkeyPatch
):
    hook.statuses = [500, 500, 500]
    failed = _alerts(ops_settings, hook.url, monkeypatch)

    assert failed.exit_code == 1
    assert "Error: 1 notifications could not be delivered" in failed.output
    [(delivery_id, status, attempts, last_error)] = _deliveries(ops_settings)
    assert (status, attempts) == ("failed", 3)
    assert last_error == (
        f"webhook at 127.0.0.1:{hook.port} failed after 3 attempts (HTTP 500); the notification "
        "is kept and retried on the next run"
    )
    for secret in SECRETS:
        assert secret not in failed.output

    retried = _alerts(ops_settings, hook.url, monkeypatch)
    assert retried.exit_code == 0, retried.output
    assert "1 earlier failed notifications delivered" in retried.output
    assert _deliveries(ops_settings) == [(delivery_id, "sent", 4, None)]
    assert [r["key"] for r in hook.requests] == [delivery_id] * 4


def test_a_connection_error_names_the_host_only(ops_settings: Settings):
    sink = WebhookSink(
        "http://alice:pa55word@127.0.0.1:9/hooks/k3yPath?token=t0ken123",
        timeout_seconds=1,
        attempts=2,
        backoff_seconds=0,
    )
    from ledger.alerts.delivery import DeliveryError

    with pytest.raises(DeliveryError) as raised:
        sink.send({"text": "x"}, "key-1")
    assert raised.value.attempts == 2
    assert str(raised.value).startswith("webhook at 127.0.0.1:9 failed after 2 attempts (")
    for secret in SECRETS:
        assert secret not in str(raised.value)


def test_a_redirect_is_a_failed_delivery_and_the_credentials_never_reach_its_target():
    elsewhere = Hook(port=0)

    class Other(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            elsewhere.requests.append({"authorization": self.headers["Authorization"]})
            self.send_response(200)
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args) -> None:
            pass

    other = ThreadingHTTPServer(("127.0.0.1", 0), Other)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    redirecting = Hook(port=0)

    class Redirecting(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            redirecting.requests.append({"authorization": self.headers["Authorization"]})
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{other.server_address[1]}/stolen")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        sink = WebhookSink(
            f"http://alice:pa55word@127.0.0.1:{port}/hooks/k3yPath", attempts=3, backoff_seconds=0
        )
        from ledger.alerts.delivery import DeliveryError

        with pytest.raises(DeliveryError) as raised:
            sink.send({"text": "x"}, "key-1")
    finally:
        for running in (server, other):
            running.shutdown()
            running.server_close()
    assert str(raised.value) == (
        f"webhook at 127.0.0.1:{port} answered HTTP 302 (a redirect, not followed: the message "
        "and its credentials go to the configured host only; set LEDGER_WEBHOOK_URL to the final "
        "address); the notification is kept and retried on the next run"
    )
    assert raised.value.attempts == 1
    basic = "Basic " + base64.b64encode(b"alice:pa55word").decode()
    assert redirecting.requests == [{"authorization": basic}]
    assert elsewhere.requests == []


def test_a_malformed_ipv6_webhook_url_is_one_line_without_the_url(
    tmp_path, monkeypatch: pytest.MonkeyPatch
):
    settings = Settings(home=tmp_path, reference_dir=tmp_path)
    result = _alerts(settings, "http://alice:pa55word@[::1/hooks/k3yPath", monkeypatch)

    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines()[-1] == (
        "Error: LEDGER_WEBHOOK_URL cannot be parsed as a URL (check brackets around an IPv6 "
        "address; the URL is not shown, it holds the webhook's secret)"
    )
    assert "Traceback" not in result.output
    for secret in SECRETS:
        assert secret not in result.output
