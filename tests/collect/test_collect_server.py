"""The HTTP collector (`ledger collect serve`) over real HTTP on localhost, as a real process.

Every authentication failure, oversized, wrongly typed and malformed bodies, concurrent clients,
a server killed mid-stream (accepted batches all present once after clients retry), the HTTP
sink, and secrets kept out of the server's output.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb
import pytest

from ledger.collect.credentials import retell_signature
from ledger.collect.sink import FileSink, HttpSink
from ledger.contract.verdict import verdict
from ledger.core.settings import REPO_ROOT, Settings
from tests.support.events import INGEST_TIME
from tests.support.stacks import retell_webhook, vapi_report

TOKENS = {
    "gw-a": "token-a-0123456789",
    "gw-b": "token-b-9876543210",
    "gw-all": "token-all-5555555555",
}
# The tenants each token may write (SPEC 12): a list per token is required.
GRANTS = {"gw-a": "[acme-telecom, bright-bank]", "gw-b": "[acme-telecom]", "gw-all": '["*"]'}
VAPI_SECRET = "vapi-secret-abcdef"
RETELL_KEY = "retell-key-key_123456"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Collector:
    home: Path
    port: int
    config: Path
    process: subprocess.Popen | None = None
    options: tuple[str, ...] = ()  # more `ledger collect serve` options
    environment: tuple[tuple[str, str], ...] = ()  # more variables (settings) for it

    @property
    def landing(self) -> Path:
        return self.home / "landing"

    def start(self) -> Collector:
        env = {
            **os.environ,
            "LEDGER_HOME": str(self.home),
            "RETELL_KEY_FOR_TEST": RETELL_KEY,
            **dict(self.environment),
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ledger.commands.cli",
                "collect",
                "serve",
                "--config",
                str(self.config),
                "--port",
                str(self.port),
                "--max-body-mb",
                "1",
                *self.options,
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=REPO_ROOT,
        )
        # Until it answers or exits, however loaded the machine (the per-test timeout bounds it).
        while self.process.poll() is None:
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return self
            except OSError:
                time.sleep(0.1)
        # Exited (e.g. the port was taken) or never answered: say why, leave no process behind.
        self.process.kill()
        output, _ = self.process.communicate(timeout=20)
        raise RuntimeError(f"the collector did not start:\n{output.decode()}")

    def kill(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        self.process.stdout.close()

    def stop(self) -> str:
        assert self.process is not None
        self.process.terminate()
        output, _ = self.process.communicate(timeout=20)
        return output.decode()

    def request(self, method: str, path: str, body: bytes = b"", headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            connection.close()

    def post_events(self, events: list[dict], token: str = TOKENS["gw-a"], kind: str = "lines"):
        if kind == "lines":
            body = "".join(json.dumps(e) + "\n" for e in events).encode()
            content_type = "application/x-ndjson"
        else:
            body, content_type = json.dumps(events).encode(), "application/json"
        headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
        return self.request("POST", "/v1/events", body, headers)


def _write_config(path: Path) -> Path:
    lines = ["sources:"]
    lines += [
        f"  {source}: {{token: {token}, tenants: {GRANTS[source]}}}"
        for source, token in TOKENS.items()
    ]
    lines += [
        "vapi: {secret: " + VAPI_SECRET + ", source: vapi, tenant_id: nova-retail, "
        "tenants: [nova-retail, acme-telecom]}",
        "retell: {api_key_env: RETELL_KEY_FOR_TEST, source: retell, tenant_id: nova-retail, "
        "tenants: [nova-retail, bright-bank]}",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _collector(root: Path) -> Collector:
    root.mkdir(parents=True, exist_ok=True)
    return Collector(root / "home", _free_port(), _write_config(root / "collector.yaml"))


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory):
    running = _collector(tmp_path_factory.mktemp("collector")).start()
    yield running
    output = running.stop()
    # Secrets are never printed, not even at start-up or in access logs.
    for secret in (*TOKENS.values(), VAPI_SECRET, RETELL_KEY):
        assert secret not in output


def _event(number: int, session: str = "http-s1", source: str | None = None) -> dict:
    event = {
        "event_id": f"{session}-e{number}",
        "event_type": "asr.usage",
        "occurred_at": "2026-11-20T02:00:00Z",
        "tenant_id": "acme-telecom",
        "session_id": session,
        "provider": "aliyun",
        "model": "paraformer-realtime-v2",
        "audio_seconds": "1.5",
    }
    return event if source is None else {"source": source, **event}


def _stored_lines(path: Path) -> list[dict]:
    return [json.loads(text) for text in path.read_text().splitlines()]


def test_a_batch_is_stored_durably_under_the_tokens_source(collector):
    status, body = collector.post_events([_event(1), _event(2, source="gw-a")])
    assert (status, body["accepted"]) == (202, 2)
    stored = collector.landing / body["file"]
    assert stored.parent.parent.name == "gw-a"
    assert [e["source"] for e in _stored_lines(stored)] == ["gw-a", "gw-a"]
    assert not list(collector.landing.rglob(".*"))  # no temporary file left behind


def test_a_json_array_is_accepted_like_json_lines(collector):
    status, body = collector.post_events([_event(3), _event(4)], kind="array")
    assert (status, body["accepted"]) == (202, 2)
    assert len(_stored_lines(collector.landing / body["file"])) == 2


def test_numbers_are_stored_as_sent_when_the_collector_adds_the_source(collector):
    # Written again to add the token's source, a line keeps its numbers' text: through a float,
    # 0.10000000000000000000000001 would land as 0.1 and be accepted so, not refused as it is.
    exact = "0.10000000000000000000000001"
    event = {key: value for key, value in _event(8).items() if key != "audio_seconds"}
    sent = json.dumps(event)[:-1] + f', "audio_seconds": {exact}}}'
    landed = json.dumps({"source": "gw-a", **event})[:-1] + f', "audio_seconds": {exact}}}'
    headers = {"Authorization": f"Bearer {TOKENS['gw-a']}"}
    for content_type, body in (("application/x-ndjson", sent), ("application/json", f"[{sent}]")):
        status, reply = collector.request(
            "POST", "/v1/events", body.encode(), {**headers, "Content-Type": content_type}
        )
        assert (status, reply["accepted"]) == (202, 1)
        assert (collector.landing / reply["file"]).read_text() == landed + "\n"


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer ", "Bearer wrong-token", f"Basic {TOKENS['gw-a']}", TOKENS["gw-a"]],
)
def test_events_without_a_valid_bearer_token_are_refused(collector, authorization):
    headers = {"Content-Type": "application/x-ndjson"}
    if authorization is not None:
        headers["Authorization"] = authorization
    status, body = collector.request("POST", "/v1/events", b"{}\n", headers)
    assert (status, body["error"]) == (401, "unauthorized")


def test_a_token_cannot_write_another_sources_events(collector):
    status, body = collector.post_events([_event(5), _event(6, source="gw-a")], TOKENS["gw-b"])
    assert (status, body["error"]) == (400, "malformed_batch")
    assert body["problems"] == [{"line": 2, "reason": "source_mismatch: not this token's source"}]


def test_malformed_batches_are_refused_whole_with_the_lines_named(collector):
    good = json.dumps(_event(7))
    headers = {"Authorization": f"Bearer {TOKENS['gw-a']}", "Content-Type": "application/x-ndjson"}
    before = sorted(collector.landing.rglob("*.jsonl"))
    status, body = collector.request(
        "POST", "/v1/events", f"{good}\n{{not json\n[1, 2]\n".encode(), headers
    )
    assert status == 400
    assert [p["line"] for p in body["problems"]] == [2, 3]
    assert body["problems"][1]["reason"] == "not a JSON object"
    assert collector.request("POST", "/v1/events", b"\n\n", headers)[1]["error"] == "empty_batch"
    array = {**headers, "Content-Type": "application/json"}
    status, body = collector.request("POST", "/v1/events", b"[{]", array)
    assert (status, body["error"]) == (400, "malformed_batch")
    assert sorted(collector.landing.rglob("*.jsonl")) == before  # nothing of them was stored


def test_oversized_and_wrongly_typed_bodies_are_refused(collector):
    headers = {"Authorization": f"Bearer {TOKENS['gw-a']}", "Content-Type": "application/x-ndjson"}
    big = (json.dumps(_event(8)) + "\n").encode() * 5000  # over the 1 MB limit of this server
    assert len(big) > 1024 * 1024
    status, body = collector.request("POST", "/v1/events", big, headers)
    assert (status, body["error"]) == (413, "payload_too_large")
    status, body = collector.request(
        "POST", "/v1/events", b"x", {**headers, "Content-Type": "text/plain"}
    )
    assert (status, body["error"]) == (415, "unsupported_media_type")


def test_an_event_over_the_line_limit_is_refused_whole_and_never_acknowledged(tmp_path):
    # The ingest would quarantine it as line_too_long (LEDGER_MAX_LINE_BYTES): refused at the
    # door instead, its client told.
    collector = replace(
        _collector(tmp_path), environment=(("LEDGER_MAX_LINE_BYTES", "4096"),)
    ).start()
    try:
        unpadded = len(json.dumps({**_event(1, source="gw-a"), "model": ""}))
        fits = {**_event(1, source="gw-a"), "model": "m" * (4096 - unpadded)}
        over = {**_event(2, source="gw-a"), "model": "m" * (4097 - unpadded)}
        assert [len(json.dumps(e).encode()) for e in (fits, over)] == [4096, 4097]

        status, body = collector.post_events([fits, over])
        assert (status, body) == (
            413,
            {
                "error": "event_too_large",
                "detail": "event 2 of the batch is 4,097 bytes, over the line limit of 4,096 "
                "bytes; nothing of this batch was stored",
            },
        )
        assert list(collector.landing.rglob("*.jsonl")) == []
        status, body = collector.post_events([fits], kind="array")
        assert (status, body["accepted"]) == (202, 1)
    finally:
        collector.stop()


def test_json_nested_too_deeply_to_read_is_refused_as_the_clients_error(collector):
    headers = {"Authorization": f"Bearer {TOKENS['gw-a']}", "Content-Type": "application/x-ndjson"}
    before = sorted(collector.landing.rglob("*.jsonl"))
    deep = '{"a": ' * 100_000 + "1" + "}" * 100_000
    status, body = collector.request(
        "POST", "/v1/events", f"{json.dumps(_event(11))}\n{deep}\n".encode(), headers
    )
    assert (status, body["error"], body["problems"]) == (
        400,
        "malformed_batch",
        [{"line": 2, "reason": "nested too deeply to read"}],
    )
    array = {**headers, "Content-Type": "application/json"}
    status, body = collector.request("POST", "/v1/events", b"[" * 100_000 + b"]" * 100_000, array)
    assert (status, body) == (
        400,
        {"error": "malformed_batch", "detail": "the body is nested too deeply to read"},
    )
    vapi = {"Content-Type": "application/json", "x-vapi-secret": VAPI_SECRET}
    status, body = collector.request("POST", "/v1/webhooks/vapi", deep.encode(), vapi)
    assert (status, body) == (
        400,
        {"error": "malformed_payload", "detail": "the body is nested too deeply to read"},
    )
    assert sorted(collector.landing.rglob("*.jsonl")) == before


def test_vapi_webhook_needs_its_secret_and_stores_the_reports_events(collector):
    body = json.dumps(vapi_report("vapi-http-1", "acme-telecom")).encode()
    json_type = {"Content-Type": "application/json"}
    for headers in (json_type, {**json_type, "x-vapi-secret": "wrong"}):
        status, answer = collector.request("POST", "/v1/webhooks/vapi", body, headers)
        assert (status, answer["error"]) == (401, "unauthorized")
    headers = {**json_type, "x-vapi-secret": VAPI_SECRET}
    status, answer = collector.request("POST", "/v1/webhooks/vapi", body, headers)
    assert (status, answer["accepted"]) == (202, 11)  # start, end, 4 usage, 5 costs
    stored = _stored_lines(collector.landing / answer["file"])
    assert {e["source"] for e in stored} == {"vapi"}
    assert {e["session_id"] for e in stored} == {"vapi-http-1"}
    other = json.dumps({"message": {"type": "status-update", "status": "ended"}}).encode()
    assert collector.request("POST", "/v1/webhooks/vapi", other, headers) == (
        200,
        {"accepted": 0, "detail": "nothing to record"},
    )
    bad = json.dumps({"message": {"type": "end-of-call-report", "call": {}}}).encode()
    status, answer = collector.request("POST", "/v1/webhooks/vapi", bad, headers)
    assert (status, answer["detail"]) == (400, "message.call.id is missing")


def test_retell_webhook_needs_a_fresh_signature_of_the_exact_body(collector):
    body = json.dumps(retell_webhook("retell-http-1", "bright-bank")).encode()
    json_type = {"Content-Type": "application/json"}
    now_ms = int(time.time() * 1000)
    refused = [
        {},
        {"x-retell-signature": "v=1,d=00"},
        {"x-retell-signature": retell_signature("another-key", body)},
        {"x-retell-signature": retell_signature(RETELL_KEY, body, now_ms - 10 * 60 * 1000)},
        {"x-retell-signature": retell_signature(RETELL_KEY, body + b" ")},
    ]
    for signature in refused:
        status, answer = collector.request(
            "POST", "/v1/webhooks/retell", body, {**json_type, **signature}
        )
        assert (status, answer["error"]) == (401, "unauthorized"), signature
    headers = {**json_type, "x-retell-signature": retell_signature(RETELL_KEY, body)}
    status, answer = collector.request("POST", "/v1/webhooks/retell", body, headers)
    assert (status, answer["accepted"]) == (202, 5)


def _ingest(landing: Path, home: Path):
    from ledger.ingest import ingest_paths

    settings = Settings(home=home, reference_dir=REPO_ROOT / "data" / "reference")
    results = ingest_paths(settings, [landing])
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        counts = con.execute("select count(*), count(distinct event_id) from raw.events").fetchone()
    return results, counts


def _client(collector: Collector, name: str, batches: range, size: int, sent: list) -> None:
    """Sends its batches in order; a batch is re-sent (same event ids) until it gets a 202."""
    for batch in batches:
        events = [_event(n, session=f"{name}-b{batch}") for n in range(size)]
        while True:
            try:
                if collector.post_events(events)[0] == 202:
                    sent.append(len(events))
                    break
            except (OSError, http.client.HTTPException):
                pass  # refused, reset or cut off mid-response: send the same batch again
            time.sleep(0.05)


def test_concurrent_clients_all_land_once(tmp_path):
    collector = _collector(tmp_path / "concurrent").start()
    sent: list[int] = []
    try:
        threads = [
            threading.Thread(target=_client, args=(collector, f"c{n}", range(3), 40, sent))
            for n in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        collector.stop()
    assert sum(sent) == 6 * 3 * 40
    files = sorted(collector.landing.rglob("*.jsonl"))
    with duckdb.connect() as con:
        rows, distinct = con.execute(
            "select count(*), count(distinct event_id) from read_json(?, format = 'newline_delimited')",
            [[str(p) for p in files]],
        ).fetchone()
    # A batch re-sent after a lost response is stored twice; the ingest dedups it by event id.
    assert (distinct, rows) == (720, 40 * len(files))


def test_a_killed_collector_loses_no_accepted_batch_and_retries_add_nothing_twice(tmp_path):
    collector = _collector(tmp_path / "killed").start()
    sent: list[int] = []

    def clients(batches: range) -> list[threading.Thread]:
        threads = [
            threading.Thread(target=_client, args=(collector, f"k{n}", batches, 25, sent))
            for n in range(4)
        ]
        for thread in threads:
            thread.start()
        return threads

    # The second half of every client's batches is only sent after the restart: the collector
    # dies with batches still to come however the kill races the clients (on a loaded machine
    # this thread can be off the CPU while the collector stores all of a client's batches).
    first = clients(range(6))
    while len(list(collector.landing.rglob("*.jsonl"))) < 6 and any(t.is_alive() for t in first):
        time.sleep(0.02)
    collector.kill()  # SIGKILL mid-stream: no shutdown, requests cut off
    stored_when_killed = len(list(collector.landing.rglob("*.jsonl")))
    collector.start()
    for thread in first + clients(range(6, 12)):
        thread.join()
    collector.stop()
    assert stored_when_killed >= 6  # the killed collector had accepted batches
    assert sum(sent) == 4 * 12 * 25
    results, (rows, distinct) = _ingest(collector.landing, tmp_path / "warehouse")
    # Every batch a client saw accepted is there, once, however often it was sent.
    assert (rows, distinct) == (1200, 1200)
    assert sum(r.quarantined for r in results) == 0


def test_http_sink_delivers_every_event_and_spills_what_is_refused(collector, tmp_path):
    url = f"http://127.0.0.1:{collector.port}"
    sink = HttpSink(url, TOKENS["gw-b"], batch_size=50, flush_seconds=0.05, spool=tmp_path / "q")
    for number in range(230):
        sink.emit(_event(number, session="sink-s1", source="gw-b"))
    sink.close()
    assert sink.delivered == 230
    stored = [
        e
        for path in (collector.landing / "collector" / "gw-b").rglob("*.jsonl")
        for e in _stored_lines(path)
        if e["session_id"] == "sink-s1"
    ]
    assert sorted(int(e["event_id"].rsplit("e", 1)[1]) for e in stored) == list(range(230))

    fallback = FileSink(tmp_path / "spill")
    refused = HttpSink(url, "not-a-token", batch_size=10, flush_seconds=0.05, fallback=fallback)
    for number in range(15):
        refused.emit(_event(number, session="sink-s2"))
    refused.close()
    # Refused batches are kept apart from the spill (which is ingested): under its rejected/.
    rejected = tmp_path / "spill" / "rejected"
    spilled = [e for p in rejected.glob("*.jsonl") for e in _stored_lines(p)]
    assert (refused.delivered, len(spilled)) == (0, 15)
    assert list((tmp_path / "spill").glob("*.jsonl")) == []


def test_credentials_errors_name_the_file_and_entry_never_a_secret(tmp_path):
    from ledger.collect.credentials import CredentialsError, load_credentials

    path = tmp_path / "collector.yaml"
    cases = {
        "sources:\n  gw-a: {token_env: MISSING_TOKEN}\n": "sources.gw-a: environment variable "
        "MISSING_TOKEN is not set",
        "sources:\n  gw-a: {token: s3cret-one}\n  gw-b: {token: s3cret-one}\n": "sources.gw-b: "
        "the same token as sources.gw-a",
        "vapi: {secret: s3cret-two, tenant_id: acme, scenario: sales}\n": "vapi.scenario: 'sales'",
        "tokens: {}\n": "unknown keys ['tokens']",
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(CredentialsError) as caught:
            load_credentials(path, environ={})
        assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)
        assert "s3cret" not in str(caught.value)
    path.write_text("sources:\n  gw-a: {token_env: GW_A, tenants: [acme-telecom]}\n")
    credentials = load_credentials(path, environ={"GW_A": "from-env"})
    assert credentials.source_for_token("from-env") == "gw-a"
    assert "from-env" not in repr(credentials)


def test_http_sink_with_the_collector_down_spills_to_its_fallback_on_close(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    fallback = FileSink(tmp_path / "spill")
    sink = HttpSink(url, "t", batch_size=2, flush_seconds=0.05, fallback=fallback)
    for number in range(5):
        sink.emit(_event(number, session="down-s1"))
    sink.close(timeout=0.3)
    spilled = [e for p in (tmp_path / "spill").glob("*.jsonl") for e in _stored_lines(p)]
    assert sorted(e["event_id"] for e in spilled) == [f"down-s1-e{n}" for n in range(5)]


def test_http_sink_as_the_docs_show_it_spools_what_a_down_collector_missed_and_sends_it_later(
    tmp_path, monkeypatch
):
    """`HttpSink(url, token)` with no fallback, the collector unreachable when the call ends: the
    13 events are kept in $LEDGER_HOME/spool/<host_port>, and the next sink to that collector,
    once it is up, delivers them first and empties the spool (issue 38, point 8)."""
    home = tmp_path / "home"
    monkeypatch.setenv("LEDGER_HOME", str(home))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    down = HttpSink(url, token=TOKENS["gw-a"], batch_size=5, flush_seconds=0.05)
    for number in range(13):
        down.emit(_event(number, session="spooled-s1"))
    down.close(timeout=0.3)  # no DeliveryError: nothing is lost

    spool = home / "spool" / f"127.0.0.1_{port}"
    waiting = [e for p in spool.glob("*.jsonl") for e in _stored_lines(p)]
    assert (down.delivered, down.spooled) == (0, 13)
    assert sorted(e["event_id"] for e in waiting) == sorted(f"spooled-s1-e{n}" for n in range(13))

    collector = _collector(tmp_path / "collector")
    collector.port = port
    collector.start()
    try:
        later = HttpSink(url, token=TOKENS["gw-a"], batch_size=5, flush_seconds=0.05)
        later.emit(_event(0, session="spooled-s2"))
        later.close()
    finally:
        collector.stop()
    stored = [
        e["event_id"]
        for path in (collector.landing / "collector" / "gw-a").rglob("*.jsonl")
        for e in _stored_lines(path)
    ]
    assert sorted(stored) == sorted([*(f"spooled-s1-e{n}" for n in range(13)), "spooled-s2-e0"])
    assert later.delivered == 14
    assert list(spool.glob("*")) == []


def test_the_readme_pipecat_example_lands_under_the_tokens_source(collector, tmp_path):
    """README: `PipecatCollector(HttpSink(url, token=...))` with the collector config's token, the
    collector's `source` left at its default: every event is delivered under the token's source."""
    from tests.support.stacks import run_pipecat_pipeline

    sink = HttpSink(
        f"http://127.0.0.1:{collector.port}",
        token=TOKENS["gw-a"],
        flush_seconds=0.05,
        spool=tmp_path / "spool",
    )
    run_pipecat_pipeline(sink, "readme-pipecat-1", "acme-telecom")
    sink.close()  # raised DeliveryError: every batch was refused as source_mismatch
    stored = [
        e
        for path in (collector.landing / "collector" / "gw-a").rglob("*.jsonl")
        for e in _stored_lines(path)
        if e["session_id"] == "readme-pipecat-1"
    ]
    assert (sink.delivered, sink.refusals, sink.source) == (len(stored), {}, "gw-a")
    assert {e["source"] for e in stored} == {"gw-a"}
    assert {e["event_type"] for e in stored} >= {"session.started", "llm.usage", "session.ended"}


def test_a_refused_batch_is_kept_apart_and_said_once_per_reason(
    collector, tmp_path, monkeypatch, caplog
):
    home = tmp_path / "home"
    monkeypatch.setenv("LEDGER_HOME", str(home))
    url = f"http://127.0.0.1:{collector.port}"
    sink = HttpSink(url, "not-a-token", batch_size=5, flush_seconds=0.05)
    with caplog.at_level("ERROR", logger="ledger.collect.sink"):
        for number in range(12):
            sink.emit(_event(number, session="refused-s1", source="gw-a"))
        sink.close()
    # Without a fallback the refused events are under $LEDGER_HOME/landing/rejected/, all of them.
    rejected = home / "landing" / "rejected"
    kept = [e for p in sorted(rejected.glob("*.jsonl")) for e in _stored_lines(p)]
    assert sorted(e["event_id"] for e in kept) == sorted(f"refused-s1-e{n}" for n in range(12))
    assert sink.refusals == {"401 unauthorized": 12}
    [record] = caplog.records  # three batches, one reason: said once
    assert "401 unauthorized: a valid bearer token is required" in record.getMessage()
    assert str(rejected) in record.getMessage()
    # A folder ingest of the landing folder never reads them; named, they ingest.
    results, _ = _ingest(home / "landing", tmp_path / "warehouse")
    assert results == []
    results, (rows, _) = _ingest(rejected, tmp_path / "warehouse")
    assert (sum(r.accepted for r in results), rows) == (12, 12)


def test_the_collector_removes_the_temporary_files_a_killed_one_left(tmp_path):
    collector = _collector(tmp_path / "leftovers")
    folder = collector.landing / "collector" / "gw-a" / "2026-11-20"
    folder.mkdir(parents=True)
    leftover = folder / ".20261120T020000000000Z-0123456789ab.jsonl.tmp"
    leftover.write_text(json.dumps(_event(0)) + "\n")
    stored = folder / "20261120T020000000000Z-ba9876543210.jsonl"
    stored.write_text(json.dumps(_event(1)) + "\n")
    collector.start()
    collector.stop()
    assert sorted(p.name for p in folder.iterdir()) == [stored.name]


def test_a_token_writes_only_the_tenants_its_credential_grants(collector):
    granted, other = _event(20), {**_event(21), "tenant_id": "bright-bank"}
    before = sorted(collector.landing.rglob("*.jsonl"))
    for kind, where in (("lines", {"line": 2}), ("array", {"index": 1})):
        status, body = collector.post_events([granted, other], TOKENS["gw-b"], kind=kind)
        assert (status, body["error"]) == (403, "tenant_not_granted")
        assert body["problems"] == [
            {**where, "reason": "tenant_not_granted", "tenant_id": "bright-bank"}
        ]
        assert "(bright-bank); nothing of this batch was stored" in body["detail"]
    assert sorted(collector.landing.rglob("*.jsonl")) == before  # all or nothing per batch
    # Another credential's grant holds that tenant; a "*" grant holds every tenant.
    assert collector.post_events([granted, other], TOKENS["gw-a"])[0] == 202
    nova = {**_event(22), "tenant_id": "nova-retail"}
    assert collector.post_events([nova], TOKENS["gw-all"])[0] == 202
    status, body = collector.post_events([nova], TOKENS["gw-a"])
    assert (status, body["problems"][0]["tenant_id"]) == (403, "nova-retail")


def test_webhooks_write_only_their_granted_tenants(collector):
    before = sorted(collector.landing.rglob("*.jsonl"))
    json_type = {"Content-Type": "application/json"}
    body = json.dumps(vapi_report("vapi-grant-1", "bright-bank")).encode()
    status, answer = collector.request(
        "POST", "/v1/webhooks/vapi", body, {**json_type, "x-vapi-secret": VAPI_SECRET}
    )
    assert (status, answer["error"]) == (403, "tenant_not_granted")
    assert {p["tenant_id"] for p in answer["problems"]} == {"bright-bank"}
    body = json.dumps(retell_webhook("retell-grant-1", "acme-telecom")).encode()
    headers = {**json_type, "x-retell-signature": retell_signature(RETELL_KEY, body)}
    status, answer = collector.request("POST", "/v1/webhooks/retell", body, headers)
    assert (status, answer["error"]) == (403, "tenant_not_granted")
    assert {p["tenant_id"] for p in answer["problems"]} == {"acme-telecom"}
    assert sorted(collector.landing.rglob("*.jsonl")) == before


def test_a_webhook_whose_metadata_names_no_tenant_id_is_refused_never_billed_to_its_own(
    collector,
):
    """Issue 41: `bright bank` (a space) is no tenant id; it was billed to the webhook's tenant."""
    before = sorted(collector.landing.rglob("*.jsonl"))
    json_type = {"Content-Type": "application/json"}
    body = json.dumps(vapi_report("vapi-bad-tenant-1", "bright bank")).encode()
    status, answer = collector.request(
        "POST", "/v1/webhooks/vapi", body, {**json_type, "x-vapi-secret": VAPI_SECRET}
    )
    assert (status, answer["error"], answer["detail"]) == (
        400,
        "malformed_payload",
        "message.call.metadata.tenant_id 'bright bank' is not a tenant id (1-128 printable "
        "ASCII characters, no spaces): the call is refused, not billed to the webhook's tenant "
        "nova-retail",
    )
    body = json.dumps(retell_webhook("retell-bad-tenant-1", "bright bank")).encode()
    headers = {**json_type, "x-retell-signature": retell_signature(RETELL_KEY, body)}
    status, answer = collector.request("POST", "/v1/webhooks/retell", body, headers)
    assert (status, answer["error"], answer["detail"]) == (
        400,
        "malformed_payload",
        "call.metadata.tenant_id 'bright bank' is not a tenant id (1-128 printable ASCII "
        "characters, no spaces): the call is refused, not billed to the webhook's tenant "
        "nova-retail",
    )
    assert sorted(collector.landing.rglob("*.jsonl")) == before
    # A report that names no tenant is the webhook's own, as before.
    report = vapi_report("vapi-no-tenant-1", "x")
    del report["message"]["call"]["metadata"]
    status, answer = collector.request(
        "POST", "/v1/webhooks/vapi", json.dumps(report).encode(),
        {**json_type, "x-vapi-secret": VAPI_SECRET},
    )  # fmt: skip
    assert status == 202
    stored = _stored_lines(collector.landing / answer["file"])
    assert {e["tenant_id"] for e in stored} == {"nova-retail"}


def test_a_credential_grants_only_the_tenants_it_lists(tmp_path):
    from ledger.collect.credentials import CredentialsError, load_credentials

    path = tmp_path / "collector.yaml"
    cases = {
        # Written before grants existed: the collector stops at start-up, the entry named.
        "sources:\n  gw-a: {token: t-1}\n": "sources.gw-a.tenants: give the tenants",
        "sources:\n  gw-a: {token: t-1, tenants: []}\n": "sources.gw-a.tenants: give the tenants",
        "sources:\n  gw-a: {token: t-1, tenants: ['*', acme]}\n": "list it alone",
        "sources:\n  gw-a: {token: t-1, tenants: ['a b']}\n": "'a b' is not an identifier",
        "vapi: {secret: s, tenant_id: acme, tenants: [bright]}\n": "vapi.tenants: must include "
        "its tenant_id 'acme'",
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(CredentialsError) as caught:
            load_credentials(path, environ={})
        assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)
    path.write_text(
        "sources:\n  gw-a: {token: t-1, tenants: [acme, bright]}\n  gw-b: {token: t-2, "
        "tenants: ['*']}\nvapi: {secret: s, tenant_id: acme}\n"
    )
    credentials = load_credentials(path, environ={})
    grant_a, grant_b = credentials.grant_for("gw-a"), credentials.grant_for("gw-b")
    assert [grant_a.allows(t) for t in ("acme", "bright", "nova", 7, None)] == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert [grant_b.allows(t) for t in ("acme", "nova")] == [True, True]
    assert credentials.grant_for("unknown").allows("acme") is False
    assert credentials.vapi is not None
    assert [credentials.vapi.grant.allows(t) for t in ("acme", "bright")] == [True, False]


def _read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a guard of 30 s, never hit
    by a server that times the client out)."""
    sock.settimeout(30)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_slow_clients_are_disconnected_without_holding_the_collector(tmp_path):
    collector = _collector(tmp_path / "slow")
    collector.options = ("--header-timeout", "1", "--body-timeout", "1")
    collector.start()
    try:
        before = sorted(collector.landing.rglob("*.jsonl"))
        silent = socket.create_connection(("127.0.0.1", collector.port))
        half = socket.create_connection(("127.0.0.1", collector.port))
        half.sendall(b"POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthoriz")
        body = socket.create_connection(("127.0.0.1", collector.port))
        body.sendall(
            b"POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Authorization: Bearer {TOKENS['gw-a']}\r\n".encode()
            + b"Content-Type: application/x-ndjson\r\nContent-Length: 500\r\n\r\n"
            + json.dumps(_event(30)).encode()[:40]
        )
        huge = socket.create_connection(("127.0.0.1", collector.port))
        huge.sendall(b"GET /healthz HTTP/1.1\r\nX-Padding: " + b"a" * 70_000)
        # A client that never finishes its headers (or sends nothing) gets 408 and is closed;
        # one that never finishes its body is closed, and nothing of it is stored.
        for sock in (silent, half):
            with sock:
                assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        with body:
            assert _read_until_closed(body) == b""
        with huge:
            reply = _read_until_closed(huge)
        assert reply.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
        assert sorted(collector.landing.rglob("*.jsonl")) == before
        assert collector.post_events([_event(31)])[0] == 202  # and the collector serves on
    finally:
        collector.stop()


def _status(port: int, path: str = "/healthz") -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    finally:
        connection.close()


def _eventually_status(port: int, expected: int) -> int:
    # The server notices closed connections on its own schedule: ask until it has.
    status = 0
    while status != expected:
        status = _status(port)
        time.sleep(0.05)
    return status


def test_connections_over_the_cap_get_503(tmp_path):
    collector = _collector(tmp_path / "cap")
    collector.options = ("--max-connections", "3", "--header-timeout", "120")
    collector.start()
    held: list[socket.socket] = []

    def hold() -> None:
        sock = socket.create_connection(("127.0.0.1", collector.port))
        sock.sendall(b"POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and stalls
        held.append(sock)

    try:
        hold()
        hold()
        assert _eventually_status(collector.port, 200) == 200  # the third of three: served
        hold()
        assert _status(collector.port) == 503  # a fourth while three are open
        for sock in held:
            sock.close()
        assert _eventually_status(collector.port, 200) == 200
    finally:
        for sock in held:
            sock.close()
        collector.stop()


# (object as sent, its first repeated key): the collector's door and the ingest's verdict alike.
_REPEATED_KEYS = [
    ('"source": "gw-b", "source": "gw-a"', "source"),
    ('"source": "gw-a", "sour\\u0063e": "gw-a"', "source"),
    ('"source": "gw-a", "tenant_id": "acme-telecom"', "tenant_id"),
    ('"source": "gw-a"', None),
]


@pytest.mark.parametrize(("members", "key"), _REPEATED_KEYS)
def test_a_repeated_key_is_refused_at_the_door_as_the_ingest_quarantines_it(
    collector, members, key
):
    # A token of gw-a once wrote an event as gw-b: the collector checked the last "source", the
    # ingest stored the first (issue 26). One rule now decides both (contract.duplicate_keys).
    event = {k: v for k, v in _event(9).items() if k != "source"}
    sent = "{" + members + ", " + json.dumps(event)[1:]
    assert verdict(sent, INGEST_TIME) == (("duplicate_key", key) if key else None)
    headers = {"Authorization": f"Bearer {TOKENS['gw-a']}"}
    for content_type, body, where in (
        ("application/x-ndjson", sent, {"line": 1}),
        ("application/json", f"[{sent}]", {"index": 0}),
    ):
        status, reply = collector.request(
            "POST", "/v1/events", body.encode(), {**headers, "Content-Type": content_type}
        )
        if key is None:
            assert (status, reply["accepted"]) == (202, 1)
        else:
            assert (status, reply["error"]) == (400, "malformed_batch")
            assert reply["problems"] == [{**where, "reason": f"duplicate_key: {key}"}]


def test_negative_zero_reaches_the_landing_file_as_sent(collector):
    # Written again to add the token's source, -0 stays -0 (a Python int would write 0, which
    # the ingest accepts): the ingest then refuses it as bad_value, as it does "-0" (SPEC 3).
    event = {key: value for key, value in _event(10).items() if key != "audio_seconds"}
    sent = json.dumps(event)[:-1] + ', "audio_seconds": -0}'
    landed = json.dumps({"source": "gw-a", **event})[:-1] + ', "audio_seconds": -0}'
    headers = {"Authorization": f"Bearer {TOKENS['gw-a']}"}
    for content_type, body in (("application/x-ndjson", sent), ("application/json", f"[{sent}]")):
        status, reply = collector.request(
            "POST", "/v1/events", body.encode(), {**headers, "Content-Type": content_type}
        )
        assert (status, reply["accepted"]) == (202, 1)
        assert (collector.landing / reply["file"]).read_text() == landed + "\n"
        assert verdict(landed, INGEST_TIME) == ("bad_value", "audio_seconds")


def test_the_collector_counts_accepted_and_refused_requests_and_open_sessions(tmp_path):
    collector = _collector(tmp_path).start()
    try:
        started = {
            **_event(1, session="m-s1"),
            "event_type": "session.started",
            "scenario": "customer_service",
            "channel": "pstn",
            "pipeline": "realtime",
        }
        for key in ("provider", "model", "audio_seconds"):
            del started[key]
        assert collector.post_events([started, _event(2, session="m-s1")])[0] == 202
        assert collector.post_events([_event(3)], token="not-a-token")[0] == 401
        assert collector.post_events(["not an object"], kind="array")[0] == 400  # type: ignore[list-item]
        connection = http.client.HTTPConnection("127.0.0.1", collector.port, timeout=10)
        connection.request("GET", "/metrics")
        response = connection.getresponse()
        assert response.getheader("Content-Type").startswith("text/plain")
        samples = dict(
            line.rsplit(" ", 1)
            for line in response.read().decode().splitlines()
            if line.startswith("ledger_") and "_created" not in line
        )
        connection.close()
    finally:
        collector.stop()
    assert {k: v for k, v in samples.items() if "batch_seconds_bucket" not in k} == {
        'ledger_collector_events_accepted_total{source="gw-a"}': "2.0",
        'ledger_collector_batches_accepted_total{source="gw-a"}': "1.0",
        'ledger_collector_requests_refused_total{reason="unauthorized"}': "1.0",
        'ledger_collector_requests_refused_total{reason="malformed_batch"}': "1.0",
        "ledger_collector_batch_seconds_count": "1.0",
        "ledger_collector_batch_seconds_sum": samples["ledger_collector_batch_seconds_sum"],
        'ledger_collector_active_sessions{pool="asr_tts"}': "0.0",
        'ledger_collector_active_sessions{pool="realtime"}': "1.0",
    }
