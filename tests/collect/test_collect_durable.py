"""FileSink survives a crash (SPEC 9): bounded loss on kill -9, a dead writer's file recovered by the
next sink and by the ingest (a torn last line quarantined), a live writer's file left alone, and an
idle file closed without waiting for another event.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from ledger.collect.sink import FileSink
from ledger.core.settings import REPO_ROOT, Settings
from ledger.ingest import ingest_paths

# A real writer process: one asr.usage event every 10 ms (100 events/s), each stamped with the
# wall-clock time it was handed to emit(), its number printed once emit() returned.
WRITER = textwrap.dedent(
    """
    import sys, time
    from datetime import UTC, datetime
    from ledger.collect.sink import FileSink

    sink = FileSink(sys.argv[1], prefix="w")
    start = time.monotonic()
    for number in range(100_000):
        now = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        sink.emit({
            "event_id": f"e{number}", "source": "durable", "event_type": "asr.usage",
            "occurred_at": now, "tenant_id": "acme-telecom", "session_id": "kill-1",
            "provider": "deepgram", "model": "nova-3", "audio_seconds": "0.5",
        })
        print(number, flush=True)
        time.sleep(max(start + (number + 1) / 100 - time.monotonic(), 0))
    """
)


def _event(number: int, session: str = "s1") -> dict:
    return {
        "event_id": f"{session}-e{number}",
        "source": "durable",
        "event_type": "asr.usage",
        "occurred_at": "2026-11-20T02:00:00Z",
        "tenant_id": "acme-telecom",
        "session_id": session,
        "provider": "deepgram",
        "model": "nova-3",
        "audio_seconds": "1.5",
    }


def _settings(home: Path) -> Settings:
    return Settings(home=home, reference_dir=REPO_ROOT / "data" / "reference")


def _killed_writer(folder: Path, events_before_kill: int) -> tuple[datetime, int]:
    """Run WRITER into `folder` until it printed `events_before_kill` numbers, kill -9 it.

    Returns the wall-clock time of the kill and the number of events it had handed to emit().
    """
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    assert writer.stdout is not None
    last = -1
    try:
        while last < events_before_kill - 1:
            line = writer.stdout.readline()
            assert line, "the writer stopped before it was killed"
            last = int(line)
        killed_at = datetime.now(UTC)
        writer.send_signal(signal.SIGKILL)
        # What it printed before the kill landed: emit() had returned for those.
        for line in writer.stdout:
            last = int(line)
    finally:
        writer.kill()
        writer.wait(10)
        writer.stdout.close()
    return killed_at, last + 1


def _read_ids(paths: list[Path]) -> tuple[list[int], list[str]]:
    """Numbers of the complete events in `paths`, and any line that is not JSON (a torn one)."""
    numbers, torn = [], []
    for path in paths:
        for text in path.read_text().splitlines():
            try:
                numbers.append(int(json.loads(text)["event_id"][1:]))
            except json.JSONDecodeError:
                torn.append(text)
    return numbers, torn


def _assert_loss_is_bounded(paths: list[Path], killed_at: datetime, emitted: int) -> list[int]:
    """The complete events in `paths` are the first ones handed over, in order, none twice, and
    the first one missing was handed over less than a second before the kill (it came after the
    last one kept). Returns their numbers."""
    numbers, times = [], []
    for path in paths:
        for text in path.read_text().splitlines():
            try:
                event = json.loads(text)
            except json.JSONDecodeError:
                continue
            numbers.append(int(event["event_id"][1:]))
            times.append(datetime.fromisoformat(event["occurred_at"].replace("Z", "+00:00")))
    assert numbers == list(range(len(numbers)))
    assert 0 < len(numbers) <= emitted
    assert killed_at - times[-1] < timedelta(seconds=1)
    return numbers


def test_after_a_kill_9_the_next_sink_recovers_every_event_emitted_a_second_before(tmp_path):
    folder = tmp_path / "landing"
    killed_at, emitted = _killed_writer(folder, events_before_kill=300)
    # The dead writer's file is hidden and nothing else made it visible.
    [left] = list(folder.glob(".*.jsonl.open"))
    assert list(folder.glob("*.jsonl")) == []

    sink = FileSink(folder)  # the next start on the same folder
    sink.close()
    assert sink.recovered == [left.with_name(left.name[1 : -len(".open")])]
    assert list(folder.glob(".*")) == []
    numbers = _assert_loss_is_bounded(sink.recovered, killed_at, emitted)
    assert len(_read_ids(sink.recovered)[1]) <= 1  # at most the last line is torn
    print(f"events at risk at 100 events/s: {emitted - len(numbers)}")


def test_after_a_kill_9_the_ingest_recovers_the_dead_writers_file(tmp_path):
    folder = tmp_path / "home" / "landing" / "agent"
    killed_at, emitted = _killed_writer(folder, events_before_kill=250)
    [left] = list(folder.glob(".*.jsonl.open"))
    numbers, torn = _read_ids([left])

    results = ingest_paths(_settings(tmp_path / "home"), [tmp_path / "home" / "landing"])

    [result] = results
    assert result.path == left.with_name(left.name[1 : -len(".open")])
    assert (result.accepted, result.quarantined) == (len(numbers), len(torn))
    assert result.reasons == ({"malformed_json": 1} if torn else {})
    assert _assert_loss_is_bounded([result.path], killed_at, emitted) == numbers


def test_a_torn_last_line_is_quarantined_and_every_complete_line_ingested(tmp_path):
    home = tmp_path / "home"
    folder = home / "landing" / "agent"
    folder.mkdir(parents=True)
    complete = [json.dumps(_event(n)) for n in range(3)]
    torn = json.dumps(_event(3))[:57]
    # What a writer killed in the middle of writing its buffer leaves: no lock, a cut last line.
    left = folder / ".agent-20261120T020000000000Z-4242-000001.jsonl.open"
    left.write_text("\n".join(complete) + "\n" + torn)
    empty = folder / ".agent-20261120T020000000000Z-4242-000002.jsonl.open"
    empty.write_text("")
    os.utime(left, (1_000_000_000, 1_000_000_000))  # its writer died long ago

    [result] = ingest_paths(_settings(home), [home / "landing"])

    assert result.path == folder / "agent-20261120T020000000000Z-4242-000001.jsonl"
    assert (result.accepted, result.quarantined, result.reasons) == (3, 1, {"malformed_json": 1})
    with duckdb.connect(str(_settings(home).warehouse_path), read_only=True) as con:
        quarantined = con.execute("select line_number, raw_text from raw.quarantine").fetchall()
    assert quarantined == [(4, torn)]
    assert sorted(p.name for p in folder.iterdir()) == [result.path.name]  # the empty one removed
    # Dated when it appeared, so the landing sensor (files newer than its last look) sees it.
    assert result.path.stat().st_mtime > 1_000_000_000


def test_a_live_writers_open_file_is_never_recovered(tmp_path):
    home = tmp_path / "home"
    folder = home / "landing" / "agent"
    writer = FileSink(folder, prefix="live")
    writer.emit(_event(0))
    writer.sync()
    [open_file] = list(folder.glob(".*.jsonl.open"))

    other = FileSink(folder, prefix="other")  # another process's sink starting on the same folder
    assert other.recovered == []
    assert ingest_paths(_settings(home), [home / "landing"]) == []
    assert open_file.exists()

    writer.emit(_event(1))
    writer.close()
    other.close()
    [result] = ingest_paths(_settings(home), [home / "landing"])
    assert (result.path.name, result.accepted) == (open_file.name[1 : -len(".open")], 2)


def test_an_idle_file_is_closed_without_waiting_for_another_event(tmp_path):
    # Pipecat reports its last STT usage after the call ended: no event follows it.
    sink = FileSink(tmp_path, prefix="idle", sync_seconds=0.05, idle_seconds=0.2)
    sink.emit(_event(0, session="late"))
    while not list(tmp_path.glob("*.jsonl")):
        time.sleep(0.05)
    [visible] = list(tmp_path.glob("*.jsonl"))
    assert [json.loads(line) for line in visible.read_text().splitlines()] == [
        _event(0, session="late")
    ]
    assert list(tmp_path.glob(".*")) == []
    sink.emit(_event(1, session="late"))  # the next event opens a new file
    sink.close()
    assert len(list(tmp_path.glob("*.jsonl"))) == 2


def test_what_was_emitted_is_in_the_file_within_the_sync_interval(tmp_path):
    # No close, no rotation: the timer alone writes and fsyncs the buffered line.
    sink = FileSink(tmp_path, prefix="sync", sync_seconds=0.05, idle_seconds=3600)
    sink.emit(_event(0))
    [open_file] = list(tmp_path.glob(".*.jsonl.open"))
    while open_file.stat().st_size == 0:
        time.sleep(0.02)
    assert json.loads(open_file.read_text()) == _event(0)
    assert os.path.exists(open_file)
    sink.close()
