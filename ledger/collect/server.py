"""`ledger collect serve`: the authenticated HTTP collector (SPEC 9).

    POST /v1/events           contract events, JSON lines or one JSON array; `Authorization: Bearer`
    POST /v1/webhooks/vapi    Vapi's end-of-call report; Vapi's `x-vapi-secret` header
    POST /v1/webhooks/retell  Retell's call_ended / call_analyzed; Retell's `x-retell-signature`
    GET  /healthz             liveness, no authentication
    GET  /metrics             Prometheus metrics (ledger/collect/metrics.py), no authentication

A `202` means the batch is durably in the landing folder: written under a hidden temporary name,
fsynced, renamed, the folder fsynced. The collector checks the envelope (authentication, size,
content type, JSON shape, `source`); the ingest applies every contract rule to the file, as to any
landing file, so nothing the collector accepted is judged twice or lost. The token decides
`source`: an event naming another source is refused, one naming none gets the token's. A token (or
webhook) writes only the tenants its credential grants: a batch holding an event for any other
tenant is refused whole with `403 tenant_not_granted`, the tenants named (SPEC 12).

Slow and idle connections are closed and concurrent ones capped (`ConnectionLimits`, see
`ledger.collect.connections`).
"""

from __future__ import annotations

import errno
import json
import logging
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ledger.collect.connections import ConnectionLimits
from ledger.collect.credentials import (
    Credentials,
    TenantGrant,
    WebhookSettings,
    bearer_token,
    retell_signature_valid,
)
from ledger.collect.event_builder import PayloadError
from ledger.collect.metrics import CollectorMetrics
from ledger.collect.retell import RetellOptions, events_from_webhook
from ledger.collect.vapi import VapiOptions, events_from_report
from ledger.contract import exact_json
from ledger.contract.duplicate_keys import array_items, first_repeated_keys
from ledger.core.landing import write_landing_file
from ledger.core.settings import DEFAULT_MAX_LINE_BYTES

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_PROBLEMS = 20
JSON_LINES_TYPES = {"application/x-ndjson", "application/jsonl", "application/json-lines"}
JSON_TYPE = "application/json"
TENANT_NOT_GRANTED = "tenant_not_granted"

log = logging.getLogger(__name__)


class RequestRefused(Exception):
    def __init__(self, status: int, error: str, detail: str, problems: list | None = None) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail, self.problems = status, error, detail, problems


@dataclass(frozen=True)
class CollectorConfig:
    landing_dir: Path
    credentials: Credentials
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    # An event longer than this is refused (413): as a landing line the ingest would quarantine
    # it (`line_too_long`, LEDGER_MAX_LINE_BYTES), so it is never acknowledged.
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)


def _refused(exc: RequestRefused) -> JSONResponse:
    body: dict[str, Any] = {"error": exc.error, "detail": exc.detail}
    if exc.problems:
        body["problems"] = exc.problems
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return JSONResponse(body, status_code=exc.status, headers=headers)


def _content_type(request: Request, allowed: set[str]) -> str:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in allowed:
        raise RequestRefused(
            415,
            "unsupported_media_type",
            f"Content-Type {kind or '(none)'} is not accepted here; use {', '.join(sorted(allowed))}",
        )
    return kind


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    too_large = RequestRefused(413, "payload_too_large", f"the body is over {limit:,} bytes")
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
    except ClientDisconnect as exc:
        # Gone before its body was complete (or cut off by the body timeout): nothing is stored,
        # and the answer goes nowhere.
        raise RequestRefused(400, "incomplete_body", "the connection closed mid-body") from exc
    return b"".join(chunks)


# JSON nested deeper than Python's reader (or writer) can recurse: a client's error, not ours. No
# event nests anywhere near as deep, so the batch is refused rather than read another way.
NESTED_TOO_DEEPLY = "nested too deeply to read"


def _shown_tenant(tenant: object) -> object:
    # Echoed back to the client that sent it, but never a whole object or a long string.
    return tenant if isinstance(tenant, str) and len(tenant) <= 128 else "(not an identifier)"


def _not_granted(source: str, refused: list[dict], problems: list[dict]) -> RequestRefused:
    tenants = sorted({str(p["tenant_id"]) for p in refused})
    log.warning("refused a batch of %s: %s for tenants %s", source, TENANT_NOT_GRANTED, tenants)
    return RequestRefused(
        403,
        TENANT_NOT_GRANTED,
        f"{len(refused)} event(s) for tenants this credential is not granted "
        f"({', '.join(tenants)}); nothing of this batch was stored",
        (refused + problems)[:MAX_PROBLEMS],
    )


def _batch_lines(body: bytes, kind: str, source: str, grant: TenantGrant) -> list[str]:
    """The batch as JSON lines of the token's `source`; refuses the whole batch if any item is bad
    or names a tenant the token is not granted (403 before 400: not allowed whatever its shape)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestRefused(400, "malformed_batch", "the body is not UTF-8") from exc
    problems: list[dict] = []
    items: list[tuple[int, str | None, Any]] = []  # (line or index, original line text, value)
    if kind == JSON_TYPE:
        try:
            document = exact_json.loads(text)
        except json.JSONDecodeError as exc:
            detail = f"not JSON: {exc.msg} at char {exc.pos}"
            raise RequestRefused(400, "malformed_batch", detail) from exc
        except RecursionError as exc:
            raise RequestRefused(
                400, "malformed_batch", f"the body is {NESTED_TOO_DEEPLY}"
            ) from exc
        values = document if isinstance(document, list) else [document]
        items = [(index, None, value) for index, value in enumerate(values)]
        texts = array_items(text) if isinstance(document, list) else [text]
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((number, line, exact_json.loads(line)))
            except json.JSONDecodeError as exc:
                problems.append({"line": number, "reason": f"not JSON: {exc.msg}"})
            except RecursionError:
                problems.append({"line": number, "reason": NESTED_TOO_DEEPLY})
        texts = [line for _, line, _ in items]
    # A key repeated in an object is refused by the ingest's own rule, before `source` or
    # `tenant_id` is read: Python sees the last value, the ingest the first (issue 26).
    if len(texts) != len(items):  # JSON Python reads and DuckDB does not (NaN): never stored
        raise RequestRefused(400, "malformed_batch", "not JSON the ingest can read")
    repeated = first_repeated_keys([str(t) for t in texts])
    where = "index" if kind == JSON_TYPE else "line"
    lines: list[str] = []
    refused: list[dict] = []
    for (position, original, value), key in zip(items, repeated, strict=True):
        if not isinstance(value, dict):
            problems.append({where: position, "reason": "not a JSON object"})
            continue
        if key is not None:
            problems.append({where: position, "reason": f"duplicate_key: {key}"})
            continue
        claimed = value.get("source")
        if claimed is not None and claimed != source:
            problems.append({where: position, "reason": "source_mismatch: not this token's source"})
            continue
        # An event naming no tenant writes none: the ingest quarantines it (missing field).
        tenant = value.get("tenant_id")
        if tenant is not None and not grant.allows(tenant):
            shown = _shown_tenant(tenant)
            refused.append({where: position, "reason": TENANT_NOT_GRANTED, "tenant_id": shown})
            continue
        if claimed is None:
            value = {"source": source, **value}
            original = None
        # A line that is already right is kept byte for byte; one written again keeps its numbers
        # exactly as sent (json.dumps would write a float's nearest double, not the number).
        try:
            lines.append(original.strip() if original is not None else exact_json.dumps(value))
        except RecursionError:  # read, but too deep to write again
            problems.append({where: position, "reason": NESTED_TOO_DEEPLY})
    if refused:
        raise _not_granted(source, refused, problems)
    if problems:
        raise RequestRefused(
            400,
            "malformed_batch",
            f"{len(problems)} item(s) refused; nothing of this batch was stored",
            problems[:MAX_PROBLEMS],
        )
    if not lines:
        raise RequestRefused(400, "empty_batch", "the batch holds no events")
    return lines


def _refuse_long_lines(lines: list[str], limit: int) -> None:
    """Refuse the batch (413) if one of its events, as the line it is stored as, is over `limit`
    bytes."""
    for position, line in enumerate(lines, start=1):
        # A character is one to four bytes: only a line that may be over is encoded to count.
        if len(line) * 4 > limit and (size := len(line.encode("utf-8"))) > limit:
            raise RequestRefused(
                413,
                "event_too_large",
                f"event {position} of the batch is {size:,} bytes, over the line limit of "
                f"{limit:,} bytes; nothing of this batch was stored",
            )


def _not_stored(source: str, exc: OSError) -> RequestRefused:
    """A batch the landing folder could not take (a full disk, a failing one): nothing of it was
    kept (`write_landing_file` removes its temporary) nor acknowledged, so its client sends it
    again. One log line each, not a traceback: a full disk refuses every batch."""
    why = exc.strerror or type(exc).__name__
    log.error("a batch of %s was not stored: %s", source, why)
    status = 507 if exc.errno == errno.ENOSPC else 503
    return RequestRefused(
        status, "not_stored", f"the batch could not be stored ({why}); send it again later"
    )


def _store(landing_dir: Path, source: str, lines: list[str]) -> Path:
    now = datetime.now(UTC)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", source)
    folder = landing_dir / "collector" / slug / now.strftime("%Y-%m-%d")
    name = f"{now.strftime('%Y%m%dT%H%M%S%fZ')}-{uuid.uuid4().hex[:12]}.jsonl"
    return write_landing_file(folder, name, lines)


def remove_leftover_temporaries(landing_dir: Path) -> list[Path]:
    """Delete the hidden temporary files a killed collector left under `landing/collector/`.

    A batch is written under a hidden temporary (`.<name>.jsonl.<pid>.tmp`, `ledger.core.durable`;
    `.<name>.jsonl.tmp` before) and renamed before its `202`: a temporary file that is still
    there was never acknowledged, so its client sends the batch again.
    """
    removed = []
    for path in sorted((landing_dir / "collector").rglob(".*.jsonl*.tmp")):
        if path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def create_app(config: CollectorConfig) -> Starlette:
    credentials = config.credentials
    remove_leftover_temporaries(config.landing_dir)
    metrics = CollectorMetrics()

    async def accept(source: str, lines: list[str], arrived: float) -> JSONResponse:
        _refuse_long_lines(lines, config.max_line_bytes)
        try:
            path = await run_in_threadpool(_store, config.landing_dir, source, lines)
        except OSError as exc:
            raise _not_stored(source, exc) from None
        metrics.accepted(source, lines, time.perf_counter() - arrived)
        stored = path.relative_to(config.landing_dir).as_posix()
        # The source tells an HttpSink which source its token stands for (its spill files use it).
        body = {"accepted": len(lines), "file": stored, "source": source}
        return JSONResponse(body, status_code=202)

    def guarded(handler: Callable) -> Callable:
        async def endpoint(request: Request) -> JSONResponse:
            request.state.arrived = time.perf_counter()
            try:
                return await handler(request)
            except RequestRefused as exc:
                metrics.refusal(exc.error)
                return _refused(exc)

        return endpoint

    async def post_events(request: Request) -> JSONResponse:
        source = credentials.source_for_token(bearer_token(request.headers.get("authorization")))
        if source is None:
            raise RequestRefused(401, "unauthorized", "a valid bearer token is required")
        kind = _content_type(request, JSON_LINES_TYPES | {JSON_TYPE})
        body = await _body(request, config.max_body_bytes)
        grant = credentials.grant_for(source)
        lines = _batch_lines(body, kind, source, grant)
        return await accept(source, lines, request.state.arrived)

    async def record(
        request: Request, settings: WebhookSettings, body: bytes, convert: Callable
    ) -> JSONResponse:
        try:
            events = convert(json.loads(body))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RequestRefused(400, "malformed_payload", "the body is not JSON") from exc
        except RecursionError as exc:
            detail = f"the body is {NESTED_TOO_DEEPLY}"
            raise RequestRefused(400, "malformed_payload", detail) from exc
        except PayloadError as exc:
            raise RequestRefused(400, "malformed_payload", str(exc)) from exc
        if not events:
            return JSONResponse({"accepted": 0, "detail": "nothing to record"}, status_code=200)
        # The call's metadata names its tenant: it must be one the webhook is granted.
        refused = [
            {"event_id": event.get("event_id"), "reason": TENANT_NOT_GRANTED, "tenant_id": tenant}
            for event in events
            if not settings.grant.allows(tenant := event.get("tenant_id"))
        ]
        if refused:
            raise _not_granted(settings.source, refused, [])
        lines = [json.dumps(event) for event in events]
        return await accept(settings.source, lines, request.state.arrived)

    def configured(settings: WebhookSettings | None) -> WebhookSettings:
        if settings is None:
            raise RequestRefused(404, "not_configured", "this webhook is not configured")
        return settings

    async def post_vapi(request: Request) -> JSONResponse:
        settings = configured(credentials.vapi)
        secret = request.headers.get("x-vapi-secret") or bearer_token(
            request.headers.get("authorization")
        )
        if not settings.secret.matches(secret):
            raise RequestRefused(401, "unauthorized", "the Vapi secret header does not match")
        _content_type(request, {JSON_TYPE})
        body = await _body(request, config.max_body_bytes)
        options = VapiOptions(settings.source, settings.tenant_id, settings.scenario)
        convert = lambda payload: events_from_report(payload, options)  # noqa: E731
        return await record(request, settings, body, convert)

    async def post_retell(request: Request) -> JSONResponse:
        settings = configured(credentials.retell)
        signature = request.headers.get("x-retell-signature")
        if not signature:
            raise RequestRefused(401, "unauthorized", "x-retell-signature is missing")
        _content_type(request, {JSON_TYPE})
        # The signature covers the raw body, so it is checked on the bytes as received.
        body = await _body(request, config.max_body_bytes)
        if not retell_signature_valid(settings.secret, body, signature):
            raise RequestRefused(401, "unauthorized", "x-retell-signature does not verify")
        options = RetellOptions(settings.source, settings.tenant_id, settings.scenario)
        convert = lambda payload: events_from_webhook(payload, options)  # noqa: E731
        return await record(request, settings, body, convert)

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def prometheus(request: Request) -> Response:
        body, kind = metrics.exposition()
        return Response(body, media_type=kind)

    return Starlette(
        routes=[
            Route("/v1/events", guarded(post_events), methods=["POST"]),
            Route("/v1/webhooks/vapi", guarded(post_vapi), methods=["POST"]),
            Route("/v1/webhooks/retell", guarded(post_retell), methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", prometheus, methods=["GET"]),
        ]
    )


def serve(config: CollectorConfig, host: str = "127.0.0.1", port: int = 8787) -> None:
    import uvicorn

    uvicorn.run(
        create_app(config),
        host=host,
        port=port,
        log_level="info",
        access_log=True,
        **config.limits.uvicorn_settings(),
    )
