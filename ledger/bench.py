"""`make bench`: ingest throughput against a bare DuckDB read of the same files, and build time.

    python -m ledger.bench [--sessions-per-day 500] [--format jsonl] [--skip-build]

Simulates (once, cached under data/bench/) about 5 million events, then in one run:
1. a bare `select count(*) from read_json(...)` (or `read_parquet`) over all the files;
2. `ledger ingest` of the same files into a fresh warehouse;
3. two floors that show where the ingest's time can and cannot go: a typed parse of every contract
   column of the same files (what any reader must do), and the storage floor: the ingested rows,
   already typed, committed again one transaction per file into a fresh warehouse, without
   validation, deduplication or quarantine (what DuckDB needs just to store them as the ingest must);
4. `ledger build` (reference data, dbt build with tests, publish) on that warehouse;
and, first, the events/s the HTTP collector accepts from N concurrent clients (`--collector-clients`).
It prints the rates and their ratios; the README quotes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import duckdb

from ledger.settings import REPO_ROOT, Settings

BENCH_DIR = REPO_ROOT / "data" / "bench"


def _simulated(sessions_per_day: int, fmt: str) -> list[Path]:
    from ledger.ingest.files import discover
    from ledger.simulate import simulate

    folder = BENCH_DIR / f"landing-{sessions_per_day}-{fmt}"
    marker = folder / ".complete"
    if not marker.exists():
        shutil.rmtree(folder, ignore_errors=True)
        started = time.perf_counter()
        summary = simulate(folder, sessions_per_day=sessions_per_day, fmt=fmt)  # type: ignore[arg-type]
        print(
            f"simulated {summary.lines:,} lines ({summary.events:,} events) "
            f"in {time.perf_counter() - started:.1f}s -> {folder}"
        )
        marker.write_text("ok")
    return discover([folder])


def bare_read_seconds(files: list[Path], fmt: str) -> tuple[int, float]:
    listing = "[" + ", ".join(f"'{p}'" for p in files) + "]"
    reader = (
        f"read_parquet({listing})"
        if fmt == "parquet"
        else f"read_json({listing}, format = 'newline_delimited', ignore_errors = true)"
    )
    with duckdb.connect() as con:
        started = time.perf_counter()
        (rows,) = con.execute(f"select count(*) from {reader}").fetchone()
        return rows, time.perf_counter() - started


def typed_parse_seconds(files: list[Path]) -> tuple[int, float]:
    """Read every contract column of `files` with their types, as any ingest must (JSON only)."""
    from ledger.contract.fields import LINEAGE_COLUMNS, raw_event_columns

    lineage = {name for name, _ in LINEAGE_COLUMNS}
    columns = ", ".join(
        f"'{name}': '{'TIMESTAMPTZ' if kind == 'TIMESTAMP' else kind}'"
        for name, kind in raw_event_columns()
        if name not in lineage
    )
    listing = "[" + ", ".join(f"'{p}'" for p in files) + "]"
    with duckdb.connect() as con:
        started = time.perf_counter()
        (rows, *_) = con.execute(
            f"select count(*), count(columns(*)) from read_json({listing}, "
            f"format = 'newline_delimited', columns = {{{columns}}}, ignore_errors = true)"
        ).fetchone()
        return rows, time.perf_counter() - started


def storage_floor_seconds(warehouse: Path, floor: Path) -> tuple[int, float]:
    """Commit the events of `warehouse` again, file by file, into a fresh warehouse at `floor`."""
    from ledger.warehouse import connect, ensure_raw_schema

    with duckdb.connect(str(warehouse), read_only=True) as source:
        ids = [
            i
            for (i,) in source.execute(
                "select file_id from raw.events group by all order by 1"
            ).fetchall()
        ]
        files = [
            source.sql(f"select * from raw.events where file_id = {i}").to_arrow_table()
            for i in ids
        ]
    shutil.rmtree(floor.parent, ignore_errors=True)
    with connect(floor) as con:
        ensure_raw_schema(con)
        con.execute("set checkpoint_threshold = '1GB'")  # as the ingest does
        started = time.perf_counter()
        for rows in files:
            con.register("file_rows", rows)
            con.execute("begin transaction")
            con.execute("insert into raw.events by name select * from file_rows")
            con.execute("commit")
            con.unregister("file_rows")
        con.execute("checkpoint")
        seconds = time.perf_counter() - started
    shutil.rmtree(floor.parent, ignore_errors=True)
    return sum(rows.num_rows for rows in files), seconds


def collector_events_per_second(clients: int, batches: int = 20, batch_size: int = 250) -> float:
    """Events/s the HTTP collector accepts (202: fsynced in the landing folder) from `clients`."""
    import http.client
    import tempfile
    import threading

    import uvicorn

    from ledger.collect.credentials import Credentials, token_digest
    from ledger.collect.server import CollectorConfig, create_app

    token = "bench-token"
    credentials = Credentials(tokens={token_digest(token): "bench"})
    with tempfile.TemporaryDirectory() as landing:
        app = create_app(CollectorConfig(Path(landing), credentials))
        server = uvicorn.Server(uvicorn.Config(app, port=0, log_level="warning"))
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        line = json.dumps({"event_id": "e", "event_type": "asr.usage", "audio_seconds": "1"})
        body = ((line + "\n") * batch_size).encode()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"}
        accepted = []

        def client() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for _ in range(batches):
                connection.request("POST", "/v1/events", body, headers)
                response = connection.getresponse()
                response.read()
                accepted.append(batch_size if response.status == 202 else 0)

        threads = [threading.Thread(target=client) for _ in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
        server.should_exit = True
    rate = sum(accepted) / seconds
    print(
        f"HTTP collector:    {sum(accepted):,} events ({clients} clients x {batches} batches of "
        f"{batch_size}) accepted in {seconds:.2f}s = {rate:,.0f} events/s"
    )
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions-per-day", type=int, default=500)
    parser.add_argument("--format", choices=["jsonl", "parquet"], default="jsonl")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--collector-clients", type=int, default=8)
    args = parser.parse_args()
    collector_rate = collector_events_per_second(args.collector_clients)

    files = _simulated(args.sessions_per_day, args.format)
    size_mb = sum(p.stat().st_size for p in files) / 1e6
    print(f"{len(files)} files, {size_mb:,.0f} MB")

    bare_rows, bare_seconds = bare_read_seconds(files, args.format)
    print(
        f"bare DuckDB read:  {bare_rows:,} rows in {bare_seconds:.2f}s "
        f"= {bare_rows / bare_seconds:,.0f} rows/s"
    )

    home = BENCH_DIR / "home"
    shutil.rmtree(home, ignore_errors=True)
    os.environ["LEDGER_HOME"] = str(home)
    settings = Settings.from_env()
    from ledger.ingest import ingest_paths

    started = time.perf_counter()
    results = ingest_paths(settings, files)
    ingest_seconds = time.perf_counter() - started
    rows = sum(r.rows for r in results)
    accepted = sum(r.accepted for r in results)
    print(
        f"ledger ingest:     {rows:,} rows ({accepted:,} accepted) in {ingest_seconds:.2f}s "
        f"= {rows / ingest_seconds:,.0f} rows/s"
    )
    bare_rate = bare_rows / bare_seconds
    ratio = (rows / ingest_seconds) / bare_rate
    print(f"ingest rate / bare read rate = {ratio:.0%} (goal: >= 40%)")
    figures = {
        "files": len(files),
        "megabytes": round(size_mb),
        "bare_rows": bare_rows,
        "bare_seconds": round(bare_seconds, 2),
        "ingest_rows": rows,
        "ingest_seconds": round(ingest_seconds, 2),
        "ratio": round(ratio, 3),
        "collector_clients": args.collector_clients,
        "collector_events_per_second": round(collector_rate),
    }
    if args.format == "jsonl":
        parsed_rows, parse_seconds = typed_parse_seconds(files)
        print(
            f"typed parse:       {parsed_rows:,} rows in {parse_seconds:.2f}s "
            f"= {parsed_rows / parse_seconds:,.0f} rows/s ({parsed_rows / parse_seconds / bare_rate:.0%} of bare)"
        )
        figures["typed_parse_seconds"] = round(parse_seconds, 2)
    stored, floor_seconds = storage_floor_seconds(
        settings.warehouse_path, BENCH_DIR / "floor" / "warehouse.duckdb"
    )
    floor_rate = stored / floor_seconds
    print(
        f"storage floor:     {stored:,} rows in {floor_seconds:.2f}s = {floor_rate:,.0f} rows/s "
        f"({floor_rate / bare_rate:.0%} of bare; the ingest takes {ingest_seconds / floor_seconds:.1f}x it)"
    )
    figures["storage_floor_seconds"] = round(floor_seconds, 2)
    figures["storage_floor_ratio"] = round(floor_rate / bare_rate, 3)
    if not args.skip_build:
        from ledger.build import run_build

        outcome = run_build(settings)
        for line in outcome.lines:
            print(f"  {line}")
        print(f"ledger build:      {outcome.seconds:.1f}s on {accepted:,} events")
        figures["build_seconds"] = round(outcome.seconds, 1)
        figures["build_success"] = outcome.success
    (BENCH_DIR / "last_run.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
