"""A landing folder that cannot take a batch (a full disk, issue 39): the collector answers each
batch in one line of log and a 507 its client retries, never a traceback, and keeps nothing of it."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
from pathlib import Path

import httpx
import pytest

import ledger.collect.server as server
from ledger.collect.credentials import load_credentials
from ledger.collect.server import CollectorConfig, create_app
from ledger.core.durable import write_atomically

TOKEN = "token-full-0123456789"


def test_a_full_disk_refuses_each_batch_in_one_line_and_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config = tmp_path / "collector.yaml"
    config.write_text(f"sources:\n  gw-a: {{token: {TOKEN}, tenants: [acme-telecom]}}\n")
    landing = tmp_path / "landing"
    app = create_app(CollectorConfig(landing, load_credentials(config)))

    def full_disk(folder: Path, name: str, lines: object) -> Path:
        # The disk fills half-way through the batch's temporary, which is removed on the way out.
        def half_written(staged: Path) -> None:
            staged.write_text("half a batch")
            raise OSError(errno.ENOSPC, "No space left on device")

        write_atomically(folder / name, half_written)
        raise AssertionError("the write above raises")

    monkeypatch.setattr(server, "write_landing_file", full_disk)
    event = {"event_id": "e1", "event_type": "asr.usage", "tenant_id": "acme-telecom"}

    async def post_twice() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://collector") as client:
            headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-ndjson"}
            body = json.dumps(event) + "\n"
            return [await client.post("/v1/events", content=body, headers=headers) for _ in "ab"]

    with caplog.at_level(logging.INFO, logger="ledger.collect.server"):
        answers = asyncio.run(post_twice())

    assert [(a.status_code, a.json()) for a in answers] == [
        (
            507,
            {
                "error": "not_stored",
                "detail": "the batch could not be stored (No space left on device); send it "
                "again later",
            },
        )
    ] * 2
    assert [(r.levelname, r.getMessage(), r.exc_info) for r in caplog.records] == [
        ("ERROR", "a batch of gw-a was not stored: No space left on device", None)
    ] * 2
    assert [p for p in landing.rglob("*") if p.is_file()] == []
