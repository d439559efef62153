"""Slow connections are closed and concurrent ones capped, so no client can hold the collector.

uvicorn closes an idle keep-alive connection (`timeout_keep_alive`) and answers `503` to a request
that arrives while `limit_concurrency` connections are open, but it waits for ever on a client that
connects and never finishes its request line and headers, or never finishes a body it announced:
such a client needs no token to hold a connection. `GuardedProtocol` (uvicorn's httptools protocol
with deadlines) adds:

- a header deadline from the connection's start (or, on a kept-alive connection, from the first
  byte of the next request) to the end of the headers: missed, the client gets `408` and the
  connection is closed;
- a body deadline from the end of the headers to the end of the body: missed, the connection is
  closed (the request sees a disconnect and nothing of it is stored);
- a header size limit: headers still incomplete after that many bytes get `431` and a close, so a
  client cannot fill memory within the header deadline.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_KEEP_ALIVE_TIMEOUT = 5
DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_MAX_HEADER_BYTES = 64 * 1024


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = DEFAULT_HEADER_TIMEOUT  # seconds to send request line and headers
    body_timeout: float = DEFAULT_BODY_TIMEOUT  # seconds from the headers to the body's end
    keep_alive_timeout: int = DEFAULT_KEEP_ALIVE_TIMEOUT  # idle seconds between requests
    max_connections: int = DEFAULT_MAX_CONNECTIONS  # open connections served at once
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES

    def uvicorn_settings(self) -> dict[str, Any]:
        """Keyword arguments for `uvicorn.run` / `uvicorn.Config` that apply these limits."""
        protocol = type(
            "CollectorProtocol",
            (GuardedProtocol,),
            {
                "header_timeout": self.header_timeout,
                "body_timeout": self.body_timeout,
                "max_header_bytes": self.max_header_bytes,
            },
        )
        return {
            "http": protocol,
            "timeout_keep_alive": self.keep_alive_timeout,
            # uvicorn answers 503 when the open connections, the asking one included, reach its
            # limit: one more than the cap serves exactly `max_connections` at once.
            "limit_concurrency": self.max_connections + 1,
        }


def _plain_response(status: bytes) -> bytes:
    return b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


REQUEST_TIMEOUT = _plain_response(b"408 Request Timeout")
HEADERS_TOO_LARGE = _plain_response(b"431 Request Header Fields Too Large")


class GuardedProtocol(HttpToolsProtocol):
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES

    _deadline: asyncio.TimerHandle | None = None
    _reading_headers = False
    _header_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # A client that connects and sends nothing is held no longer than one sending headers.
        self._reading_headers = True
        self._arm(self.header_timeout, self._headers_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._reading_headers and not self.transport.is_closing():
            # Counted only while headers stay incomplete after the bytes were parsed, so a first
            # read holding the headers and part of a large body is never mistaken for huge headers.
            self._header_bytes += len(data)
            if self._header_bytes > self.max_header_bytes:
                self.logger.warning(
                    "%s: request headers over %d bytes", self._peer(), self.max_header_bytes
                )
                self._answer_and_close(HEADERS_TOO_LARGE)

    # Parser callbacks: the deadlines follow the request through its phases.
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._reading_headers = True
        self._header_bytes = 0
        if self._deadline is None:  # the first request keeps the deadline set at connection
            self._arm(self.header_timeout, self._headers_late)

    def on_headers_complete(self) -> None:
        self._reading_headers = False
        self._arm(self.body_timeout, self._body_late)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def _arm(self, seconds: float, callback) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, callback)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _peer(self) -> str:
        return f"{self.client[0]}:{self.client[1]}" if self.client else "a client"

    def _headers_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        self.logger.warning(
            "%s: closed, request headers not complete within %gs", self._peer(), self.header_timeout
        )
        self._answer_and_close(REQUEST_TIMEOUT)

    def _body_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        self.logger.warning(
            "%s: closed, request body not complete within %gs", self._peer(), self.body_timeout
        )
        # The application may be answering already; only the close is safe to add.
        self.transport.close()

    def _answer_and_close(self, response: bytes) -> None:
        self._disarm()
        # No response of this connection is under way while its headers are incomplete.
        if self.cycle is None or self.cycle.response_complete:
            self.transport.write(response)
        self.transport.close()
