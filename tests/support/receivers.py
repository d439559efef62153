"""Webhook receivers: real HTTP servers on 127.0.0.1 that keep what they were sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Receiver:
    port: int = 0
    messages: list[dict] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/team"


@contextmanager
def receivers(*names: str) -> Iterator[dict[str, Receiver]]:
    """One receiver per name, serving until the block ends."""
    running = []
    found: dict[str, Receiver] = {}
    for name in names:
        state = Receiver()

        class Handler(BaseHTTPRequestHandler):
            receiver = state

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                self.receiver.messages.append(json.loads(body))
                self.receiver.keys.append(self.headers["Idempotency-Key"])
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        state.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        running.append(server)
        found[name] = state
    try:
        yield found
    finally:
        for server in running:
            server.shutdown()
            server.server_close()
