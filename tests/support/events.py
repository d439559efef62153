"""Contract-shaped events for the ingest tests (tests/ingest/), the files they land in, and a
read-only look at the warehouse they go into."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from ledger.core.settings import Settings

INGEST_TIME = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def llm(event_id: str, source: str = "gw-1", input_tokens: int = 100, **extra: object) -> dict:
    return {
        "event_id": event_id,
        "source": source,
        "event_type": "llm.usage",
        "occurred_at": "2026-11-01T10:00:00Z",
        "tenant_id": "acme-telecom",
        "session_id": "s-1",
        "provider": "deepseek",
        "model": "deepseek-chat",
        "turn_index": 0,
        "input_tokens": input_tokens,
        "cached_input_tokens": 0,
        "output_tokens": 10,
        **extra,
    }


def write_jsonl(path: Path, rows: list[dict | str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"
    path.write_text(text)
    return path


def query(settings: Settings, sql: str) -> list[tuple]:
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        return con.execute(sql).fetchall()
