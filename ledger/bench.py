"""`make bench`: ingest throughput against a bare DuckDB read of the same files, and build time.

    python -m ledger.bench [--sessions-per-day 500] [--format jsonl] [--skip-build]

Simulates (once, cached under data/bench/) about 5 million events, then in one run:
1. a bare `select count(*) from read_json(...)` (or `read_parquet`) over all the files;
2. `ledger ingest` of the same files into a fresh warehouse;
3. `ledger build` (reference data, dbt build with tests, publish) on that warehouse.
It prints the rates and their ratio; the README quotes the figures.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions-per-day", type=int, default=500)
    parser.add_argument("--format", choices=["jsonl", "parquet"], default="jsonl")
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()

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
    ratio = (rows / ingest_seconds) / (bare_rows / bare_seconds)
    print(f"ingest rate / bare read rate = {ratio:.0%} (goal: >= 40%)")
    figures = {
        "files": len(files),
        "megabytes": round(size_mb),
        "bare_rows": bare_rows,
        "bare_seconds": round(bare_seconds, 2),
        "ingest_rows": rows,
        "ingest_seconds": round(ingest_seconds, 2),
        "ratio": round(ratio, 3),
    }
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
