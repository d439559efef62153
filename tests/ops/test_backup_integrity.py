"""Backups that hold every acknowledged event and restore only as written (issue 39): the landing
folder is in the backup, so a batch the collector acknowledged and no ingest had read comes back
with a restore and a build, while a client goes on posting through the backup; a backup whose files do not match its manifest's checksums is
refused in one line, before anything is restored."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import duckdb
import httpx
import pytest
from click.testing import CliRunner

from dagster_project.pipeline import run_build_job
from ledger.collect.credentials import load_credentials
from ledger.collect.server import CollectorConfig, create_app
from ledger.commands.cli import main
from ledger.core.landing import write_landing_file
from ledger.core.settings import REPO_ROOT, Settings
from ledger.ingest import ingest_paths
from tests.support.events import llm, write_jsonl

TOKEN = "token-load-0123456789"
ACKED_FILE = "collector/gw-1/2026-11-30/20261130T120000000000Z-acked.jsonl"


def _home_with_unread_batch(tmp_path: Path) -> Settings:
    """A home whose warehouse holds one file's 3 events, and whose landing folder holds a batch
    the collector acknowledged since (2 events), and a temporary it never acknowledged."""
    settings = Settings(home=tmp_path / "home", reference_dir=REPO_ROOT / "data" / "reference")
    landing = settings.landing_dir
    write_jsonl(landing / "first.jsonl", [llm(f"in-{i}") for i in range(3)])
    ingest_paths(settings, [landing])
    acked = landing / ACKED_FILE
    write_landing_file(acked.parent, acked.name, [json.dumps(llm(f"acked-{i}")) for i in (1, 2)])
    (acked.parent / ".unfinished.jsonl.4242.tmp").write_text(json.dumps(llm("never-acked")))
    return settings


def _cli(args: list[str], home: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, args, env={"LEDGER_HOME": str(home)})
    return result.exit_code, result.output


class SteadyClient:
    """A client of the collector (in this process, on the home's landing folder) posting small
    batches one after another until stopped; what it was acknowledged (`202`), in order."""

    def __init__(self, landing: Path, tmp_path: Path) -> None:
        config = tmp_path / "collector.yaml"
        config.write_text(f"sources:\n  gw-load: {{token: {TOKEN}, tenants: [acme-telecom]}}\n")
        self.app = create_app(CollectorConfig(landing, load_credentials(config)))
        self.acknowledged: list[tuple[str, list[str]]] = []  # (landing file, event ids)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.some_acknowledged = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._post()))

    async def _post(self) -> None:
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-ndjson"}
        transport = httpx.ASGITransport(app=self.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://collector") as client:
            batch = 0
            while not self.stop.is_set():
                batch += 1
                events = [
                    {k: v for k, v in llm(f"load-{batch}-{i}").items() if k != "source"}
                    for i in range(5)
                ]
                body = "".join(json.dumps(event) + "\n" for event in events)
                answer = await client.post("/v1/events", content=body, headers=headers)
                assert answer.status_code == 202, answer.text
                with self.lock:
                    self.acknowledged.append(
                        (answer.json()["file"], [event["event_id"] for event in events])
                    )
                    if len(self.acknowledged) >= 20:
                        self.some_acknowledged.set()

    def so_far(self) -> list[tuple[str, list[str]]]:
        with self.lock:
            return list(self.acknowledged)


def test_every_event_acknowledged_before_a_backup_comes_back_with_restore_and_build(
    tmp_path: Path,
) -> None:
    settings = _home_with_unread_batch(tmp_path)
    backup = tmp_path / "backup"
    client = SteadyClient(settings.landing_dir, tmp_path)
    client.thread.start()
    try:
        assert client.some_acknowledged.wait(120)
        before = client.so_far()  # acknowledged before the backup starts

        code, output = _cli(["backup", str(backup)], settings.home)
    finally:
        client.stop.set()
        client.thread.join()

    assert code == 0, output
    assert output.startswith(f"backed up into {backup}: 5 tables, 1 raw event files (3 events), ")
    landing = {
        p.relative_to(backup / "landing").as_posix() for p in (backup / "landing").rglob("*")
    }
    assert {ACKED_FILE, "first.jsonl", *(f for f, _ in before)} <= landing
    assert not list(backup.rglob("*.tmp"))

    restored = Settings(
        home=tmp_path / "restored", reference_dir=tmp_path / "restored" / "reference"
    )
    code, output = _cli(["restore", str(backup)], restored.home)
    assert code == 0, output
    outcome = run_build_job(restored)

    assert outcome.success, outcome.lines
    with duckdb.connect(str(restored.warehouse_path), read_only=True) as con:
        kept = {
            event_id for (event_id,) in con.execute("select event_id from raw.events").fetchall()
        }
    expected = {"in-0", "in-1", "in-2", "acked-1", "acked-2"}
    assert expected | {e for _, ids in before for e in ids} <= kept
    # and nothing that was never acknowledged
    assert kept <= expected | {e for _, ids in client.so_far() for e in ids}


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("tamper", "problem"),
    [
        (
            lambda b: _flip_a_byte(next((b / "raw").rglob("*.parquet"))),
            "{raw} differs from its checksum",
        ),
        (
            lambda b: (p := next((b / "raw").rglob("*.parquet"))).write_bytes(p.read_bytes()[:100]),
            "{raw} differs from its checksum",
        ),
        (lambda b: (b / "landing" / ACKED_FILE).unlink(), f"landing/{ACKED_FILE} is missing"),
        (
            lambda b: (b / "landing" / "extra.jsonl").write_text("{}\n"),
            "landing/extra.jsonl is not in its manifest",
        ),
    ],
    ids=["altered", "truncated", "missing", "added"],
)
def test_a_backup_that_does_not_match_its_manifest_is_refused_in_one_line(
    tmp_path: Path, tamper, problem: str
) -> None:
    settings = _home_with_unread_batch(tmp_path)
    backup = tmp_path / "backup"
    assert _cli(["backup", str(backup)], settings.home)[0] == 0
    [raw] = [p.relative_to(backup).as_posix() for p in (backup / "raw").rglob("*.parquet")]
    tamper(backup)

    code, output = _cli(["restore", str(backup)], tmp_path / "restored")

    assert (code, output) == (
        1,
        f"Error: {backup} does not match its manifest: {problem.format(raw=raw)}; nothing was "
        "restored\n",
    )
    assert not (tmp_path / "restored" / "warehouse.duckdb").exists()
