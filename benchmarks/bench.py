"""`make bench`: ingest throughput against a bare DuckDB read of the same files, and build time.

    python -m benchmarks.bench [--sessions-per-day 500] [--format jsonl] [--skip-build] [--memory-mb 1024]

Simulates (once, cached under data/bench/) about 5 million events, then in one run:
1. a bare `select count(*) from read_json(...)` (or `read_parquet`) over all the files;
2. `ledger ingest` of the same files into a fresh warehouse;
3. two floors that show where the ingest's time can and cannot go: a typed parse of every contract
   column of the same files (what any reader must do), and the store-once floor: the same typed
   read written once to one Parquet file (goal: the ingest within 2x of it);
4. the peak RSS of ingesting one file of `--memory-mb` MB (default 1 GB) in a child process;
5. `ledger build` (reference data, dbt build with tests, publish) on that warehouse, and the same
   build on Apache Spark (`LEDGER_ENGINE=spark`, pyspark `local[2]`) of a copy of it, with a check
   that both engines export the identical session ledger (`--no-spark` leaves Spark out);
6. publishing on a copy of that home: everything new, again with nothing changed (every Parquet
   part reused), and with the ledger's newest day changed;
7. each board page's first (cold caches, fresh connection) and warm render time on that home,
   through Streamlit's AppTest, the median of `--board-runs` (default 3) renders (goal: no page
   over 500 ms on first render);
8. the pipeline at `--replay-scale` (default 10) times a recorded volume made by `ledger
replay` (SPEC 11): a simulated week (`--replay-sessions-per-day`, `--replay-days`) is ingested and
built, replayed N times into a fresh home, and that is ingested and built (`--replay-scale 0`
skips it; `--only-replay` runs it alone, e.g. small: `--only-replay --replay-sessions-per-day 4
--replay-days 1 --replay-scale 3`);
and, first, the events/s the HTTP collector accepts from N concurrent clients (`--collector-clients`).
`--boards-only` runs 6 and 7 alone on the bench home an earlier run built (at any size).
`--only-ingest N` runs 2 and the store-once floor alone, N times interleaved, and prints each
one's wall-clock and CPU seconds (all threads) and the medians; CPU seconds move less than wall
clock on a shared machine. Small: `--only-ingest 3 --sessions-per-day 25`.
It prints the rates and their ratios; docs/benchmarks.md quotes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import duckdb

from ledger.core.settings import REPO_ROOT, Settings
from ledger.serving.links import PAGE_PATHS

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


def store_once_floor_seconds(files: list[Path], fmt: str, out: Path) -> tuple[int, float]:
    """The store-once floor: a typed read of `files` written once to one Parquet file.

    What any raw layer must at least do with the same input: parse every contract column with its
    type and store it once; the ingest's validation, deduplication, quarantine and manifest come on
    top. The goal (issue 11) is an ingest within 2x of it.
    """
    from ledger.contract.fields import LINEAGE_COLUMNS, raw_event_columns

    lineage = {name for name, _ in LINEAGE_COLUMNS}
    listing = "[" + ", ".join(f"'{p}'" for p in files) + "]"
    if fmt == "parquet":
        reader = f"read_parquet({listing}, union_by_name = true)"
    else:
        columns = ", ".join(
            f"'{name}': '{'TIMESTAMPTZ' if kind == 'TIMESTAMP' else kind}'"
            for name, kind in raw_event_columns()
            if name not in lineage
        )
        reader = (
            f"read_json({listing}, format = 'newline_delimited', columns = {{{columns}}}, "
            "ignore_errors = true)"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        started = time.perf_counter()
        [(rows,)] = con.execute(
            f"copy (select * from {reader}) to '{out}' (format parquet, compression zstd)"
        ).fetchall()
        seconds = time.perf_counter() - started
    out.unlink(missing_ok=True)
    return rows, seconds


def ingest_against_floor(files: list[Path], fmt: str, repeats: int) -> dict[str, float]:
    """`ledger ingest` of `files` into a fresh warehouse and the store-once floor, `repeats`
    times interleaved (so both see the same machine state), with wall-clock and CPU seconds."""
    import statistics

    from ledger.ingest import ingest_paths

    home = BENCH_DIR / "home-ingest"
    runs: dict[str, list[tuple[float, float]]] = {"ingest": [], "floor": []}
    rows = 0
    for _ in range(repeats):
        shutil.rmtree(home, ignore_errors=True)
        settings = Settings.from_env({"LEDGER_HOME": str(home)})
        wall, cpu = time.perf_counter(), time.process_time()
        results = ingest_paths(settings, files)
        runs["ingest"].append((time.perf_counter() - wall, time.process_time() - cpu))
        rows = sum(r.rows for r in results)
        wall, cpu = time.perf_counter(), time.process_time()
        store_once_floor_seconds(files, fmt, BENCH_DIR / "floor" / "store-once.parquet")
        runs["floor"].append((time.perf_counter() - wall, time.process_time() - cpu))
    shutil.rmtree(home, ignore_errors=True)
    figures: dict[str, float] = {"ingest_rows": rows, "repeats": repeats}
    for name, measured in runs.items():
        walls = ", ".join(f"{w:.2f}" for w, _ in measured)
        cpus = ", ".join(f"{c:.2f}" for _, c in measured)
        print(f"{name + ':':8} wall {walls} s; CPU {cpus} s")
        figures[f"{name}_wall_seconds"] = round(statistics.median(w for w, _ in measured), 2)
        figures[f"{name}_cpu_seconds"] = round(statistics.median(c for _, c in measured), 2)
    for kind in ("wall", "cpu"):
        ratio = figures[f"ingest_{kind}_seconds"] / figures[f"floor_{kind}_seconds"]
        figures[f"ingest_over_floor_{kind}"] = round(ratio, 2)
    print(
        f"{rows:,} rows; medians: ingest {figures['ingest_wall_seconds']:.2f} s wall, "
        f"{figures['ingest_cpu_seconds']:.2f} s CPU; store-once floor "
        f"{figures['floor_wall_seconds']:.2f} s wall, {figures['floor_cpu_seconds']:.2f} s CPU; "
        f"the ingest takes {figures['ingest_over_floor_wall']:.1f}x the floor in wall clock, "
        f"{figures['ingest_over_floor_cpu']:.1f}x in CPU (goal: <= 2x)"
    )
    return figures


def _big_landing_file(path: Path, megabytes: int) -> int:
    """One JSON Lines file of about `megabytes` MB of valid llm.usage events (unique ids, spread
    over 30 days); returns its line count. Cached: the file is reused while its size fits."""
    line = 330  # bytes per line, about
    lines = max(1, megabytes * 1_000_000 // line)
    marker = path.with_name(path.name + f".{lines}.complete")
    if not marker.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with duckdb.connect() as con:
            con.execute("set enable_progress_bar = false")
            con.execute(
                f"""
                copy (
                  select
                    'big-' || i as event_id, 'bench-gw' as source, 'llm.usage' as event_type,
                    strftime(timestamp '2026-11-01' + to_seconds(i % (30 * 86400)),
                             '%Y-%m-%dT%H:%M:%SZ') as occurred_at,
                    'tenant-' || (i % 7) as tenant_id, 's-' || (i // 12) as session_id,
                    'deepseek' as provider, 'deepseek-chat' as model, i % 12 as turn_index,
                    100 + i % 900 as input_tokens, 0 as cached_input_tokens,
                    10 + i % 90 as output_tokens
                  from range({lines}) t(i)
                ) to '{path}' (format json)
                """
            )
        for old in path.parent.glob(path.name + ".*.complete"):
            old.unlink()
        marker.write_text("ok")
    return lines


_MEMORY_CHILD = """
import resource, sys, time
from pathlib import Path
from ledger.ingest import ingest_paths
from ledger.core.settings import Settings
settings = Settings.from_env({"LEDGER_HOME": sys.argv[1]})
started = time.perf_counter()
[result] = ingest_paths(settings, [Path(sys.argv[2])])
seconds = time.perf_counter() - started
print(result.rows, result.accepted, seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def ingest_memory(megabytes: int) -> dict[str, float]:
    """Peak RSS of `ledger ingest` of one file of about `megabytes` MB, in a child process."""
    import subprocess
    import sys

    path = BENCH_DIR / "big" / "big.jsonl"
    _big_landing_file(path, megabytes)
    home = BENCH_DIR / "big-home"
    shutil.rmtree(home, ignore_errors=True)
    child = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, str(home), str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    rows, accepted, seconds, max_rss_kb = child.stdout.strip().splitlines()[-1].split()
    shutil.rmtree(home, ignore_errors=True)
    size_mb = path.stat().st_size / 1e6
    peak_mb = int(max_rss_kb) / 1024
    print(
        f"big-file ingest:   one {size_mb:,.0f} MB file, {int(rows):,} rows ({int(accepted):,} "
        f"accepted) in {float(seconds):.1f}s; peak RSS {peak_mb:,.0f} MB "
        f"({peak_mb / size_mb:.1f}x the file; goal for 1 GB: < 1,500 MB)"
    )
    return {
        "big_file_mb": round(size_mb),
        "big_file_seconds": round(float(seconds), 1),
        "big_file_peak_rss_mb": round(peak_mb),
    }


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


def spark_build_figures(settings: Settings, duckdb_seconds: float) -> dict:
    """The same events built on Spark (`local[2]`): a copy of the DuckDB warehouse, the job run
    with LEDGER_ENGINE=spark; its build time beside DuckDB's, and whether the two engines export
    byte-identical session ledgers."""
    from ledger.commands.build import run_build
    from ledger.serving.export import export_session_ledger
    from ledger.warehouse import copy_warehouse

    home = BENCH_DIR / "home-spark"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    copy_warehouse(settings.warehouse_path, home / "warehouse.duckdb")
    spark = settings.model_copy(update={"home": home, "engine": "spark"})
    outcome = run_build(spark)
    for line in outcome.lines:
        print(f"  {line}")
    if not outcome.success:
        print(f"spark build:       FAILED after {outcome.seconds:.1f}s")
        return {"spark_build_seconds": round(outcome.seconds, 1), "spark_build_success": False}
    exports = {}
    for name, engine_settings in (("duckdb", settings), ("spark", spark)):
        exports[name] = BENCH_DIR / f"session-ledger-{name}.csv"
        export_session_ledger(engine_settings, exports[name])
    identical = exports["duckdb"].read_bytes() == exports["spark"].read_bytes()
    print(
        f"spark build:       {outcome.seconds:.1f}s on local[2] (DuckDB: {duckdb_seconds:.1f}s, "
        f"{outcome.seconds / duckdb_seconds:.1f}x); fct_session_ledger exports "
        f"{'identical' if identical else 'DIFFER'}"
    )
    return {
        "spark_build_seconds": round(outcome.seconds, 1),
        "spark_build_success": outcome.success,
        "spark_export_identical": identical,
    }


def replay_bench(scale: int, sessions_per_day: int, days: int) -> dict[str, float]:
    """Ingest and build a recorded period, then the same period replayed `scale` times."""
    from datetime import date, timedelta

    from ledger.commands.build import run_build
    from ledger.ingest import ingest_paths
    from ledger.simulate import simulate
    from ledger.simulate.replay import replay

    root = BENCH_DIR / "replay"
    shutil.rmtree(root, ignore_errors=True)
    start = date(2026, 11, 2)
    figures: dict[str, float] = {"replay_scale": scale}
    recorded = Settings(home=root / "recorded", reference_dir=REPO_ROOT / "data" / "reference")
    replayed = Settings(home=root / "replayed", reference_dir=recorded.reference_dir)
    for settings in (recorded, replayed):
        settings.ensure_dirs()
    simulate(recorded.landing_dir, tenants=3, days=days, start=start,
             sessions_per_day=sessions_per_day, bad_row_share=0.0, duplicate_share=0.0)  # fmt: skip
    for label, settings in (("recorded", recorded), ("replayed", replayed)):
        if label == "replayed":
            started = time.perf_counter()
            summary = replay(
                recorded,
                settings.landing_dir,
                date_from=start - timedelta(days=1),
                date_to=start + timedelta(days=days),
                scale=scale,
            )
            figures["replay_seconds"] = round(time.perf_counter() - started, 2)
            print(
                f"ledger replay:     {summary.sessions:,} sessions x {scale} = "
                f"{summary.events:,} events in {figures['replay_seconds']:.2f}s"
            )
        started = time.perf_counter()
        results = ingest_paths(settings, [settings.landing_dir])
        ingest_seconds = time.perf_counter() - started
        events = sum(r.accepted for r in results)
        outcome = run_build(settings)
        if not outcome.success:
            raise RuntimeError("\n".join(outcome.lines))
        print(
            f"{label:>8} x{1 if label == 'recorded' else scale}: {events:,} events, ingest "
            f"{ingest_seconds:.2f}s, build {outcome.seconds:.1f}s "
            f"({events / outcome.seconds:,.0f} events/s built)"
        )
        figures[f"{label}_events"] = events
        figures[f"{label}_ingest_seconds"] = round(ingest_seconds, 2)
        figures[f"{label}_build_seconds"] = round(outcome.seconds, 1)
    print(
        f"build time at x{scale} / at x1 = "
        f"{figures['replayed_build_seconds'] / figures['recorded_build_seconds']:.1f}"
    )
    return figures


BOARD_PAGES = PAGE_PATHS  # every page the boards serve
FIRST_RENDER_GOAL_MS = 500


def board_render_times(settings: Settings, runs: int = 1) -> dict[str, float]:
    """Each board page's first and warm render time in ms (AppTest, in this process).

    First: Streamlit's caches cleared (so a new connection to the published file and every query
    run cold), then the page's script run. Warm: the same page run again. With `runs` > 1 every
    page is timed that many times (pages interleaved, so a burst of load on the shared machine
    hits them alike) and the median is reported, with each run's figure.
    """
    import statistics

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    # The pages read their settings from this process's environment, as under `ledger serve`.
    os.environ.update(settings.as_environment())
    app = str(REPO_ROOT / "dashboards" / "app.py")
    timings: dict[str, list[tuple[float, float, float]]] = {page: [] for page in BOARD_PAGES}
    for _ in range(max(1, runs)):
        for page in BOARD_PAGES:
            # An untimed run first: a new AppTest scans every installed package for Streamlit
            # components (seconds, once per server in production), which is no page's render time.
            at = AppTest.from_file(app, default_timeout=300).run()
            st.cache_data.clear()
            st.cache_resource.clear()
            at.switch_page(f"app_pages/{page}.py")
            started, cpu = time.perf_counter(), time.process_time()
            at.run()
            first = (time.perf_counter() - started) * 1000
            first_cpu = (time.process_time() - cpu) * 1000
            if at.exception:
                raise RuntimeError(f"board page {page} failed: {[e.value for e in at.exception]}")
            started = time.perf_counter()
            at.run()
            warm = (time.perf_counter() - started) * 1000
            timings[page].append((first, warm, first_cpu))
    figures: dict[str, float] = {}
    for page, measured in timings.items():
        first = statistics.median(f for f, _, _ in measured)
        warm = statistics.median(w for _, w, _ in measured)
        # CPU time of the process (every thread, DuckDB's included) during the first render:
        # steadier than the wall clock on a shared machine.
        cpu = statistics.median(c for _, _, c in measured)
        over = "  OVER the 500 ms goal" if first > FIRST_RENDER_GOAL_MS else ""
        each = (
            f" (median of {len(measured)}: first {', '.join(f'{f:.0f}' for f, _, _ in measured)})"
            if len(measured) > 1
            else ""
        )
        print(
            f"board {page:<13} first render {first:6.0f} ms ({cpu:4.0f} ms CPU), "
            f"warm {warm:6.0f} ms{over}{each}"
        )
        figures[f"board_{page}_first_ms"] = round(first)
        figures[f"board_{page}_first_cpu_ms"] = round(cpu)
        figures[f"board_{page}_warm_ms"] = round(warm)
    figures["board_runs"] = max(1, runs)
    figures["board_load_average"] = round(os.getloadavg()[0], 1)
    print(f"board render load average (1 min): {os.getloadavg()[0]:.1f}")
    return figures


def publish_times(settings: Settings) -> dict[str, float]:
    """Publishing cost: everything written, nothing changed, and one week of one mart changed.

    Runs on a copy of the home's warehouse and published folder, so the bench home is untouched.
    """
    import tempfile

    from ledger.pipeline.publish import publish
    from ledger.warehouse import connect, copy_warehouse

    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(dir=BENCH_DIR) as folder:
        copy = settings.model_copy(update={"home": Path(folder) / "home"})
        copy_warehouse(settings.warehouse_path, copy.warehouse_path)

        def timed(label: str) -> None:
            started = time.perf_counter()
            result = publish(copy)
            seconds = time.perf_counter() - started
            size = sum(
                p.stat().st_size for p in copy.published_path.parent.rglob("*") if p.is_file()
            )
            print(
                f"publish ({label}): {seconds:.2f}s, {result.parts_written} parts written, "
                f"{result.parts_reused} reused ({size / 1e6:,.1f} MB on disk)"
            )
            figures[f"publish_{label.replace(' ', '_')}_seconds"] = round(seconds, 2)

        timed("all new")
        timed("unchanged")
        with connect(copy.warehouse_path) as con:
            con.execute(
                "update marts.fct_session_ledger set total_cost = total_cost + 1 "
                "where business_date = (select max(business_date) from marts.fct_session_ledger)"
            )
        timed("one day of the ledger changed")
    return figures


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions-per-day", type=int, default=500)
    parser.add_argument("--format", choices=["jsonl", "parquet"], default="jsonl")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--no-spark", action="store_true", help="no Spark build beside DuckDB's")
    parser.add_argument(
        "--refresh-sessions-per-day",
        type=int,
        default=20,
        help="daily volume of the refresh bench, one new day on 30 vs 365 days (0: skip)",
    )
    parser.add_argument("--collector-clients", type=int, default=8)
    parser.add_argument(
        "--memory-mb",
        type=int,
        default=1024,
        help="size of the one file whose ingest peak RSS is measured (0: skip)",
    )
    parser.add_argument("--replay-scale", type=int, default=10)
    parser.add_argument("--replay-sessions-per-day", type=int, default=50)
    parser.add_argument("--replay-days", type=int, default=7)
    parser.add_argument("--only-replay", action="store_true")
    parser.add_argument(
        "--only-ingest",
        type=int,
        default=0,
        metavar="N",
        help="only the ingest against the store-once floor, N times interleaved",
    )
    parser.add_argument(
        "--boards-only",
        action="store_true",
        help="only the publish and board render timings, on the bench home an earlier run built",
    )
    parser.add_argument(
        "--board-runs",
        type=int,
        default=3,
        help="times each board page is rendered; the median is reported",
    )
    parser.add_argument(
        "--home",
        type=Path,
        default=BENCH_DIR / "home",
        help="with --boards-only: the built home to time (default: the bench home)",
    )
    return parser


def main() -> None:
    args = _parser().parse_args()
    if args.boards_only:
        settings = Settings.from_env({"LEDGER_HOME": str(args.home)})
        if not settings.published_path.exists():
            raise SystemExit("no bench home built yet: run `python -m benchmarks.bench` first")
        figures = {
            **publish_times(settings),
            **board_render_times(settings, args.board_runs),
        }
        (BENCH_DIR / "last_boards_run.json").write_text(json.dumps(figures, indent=2))
        return
    if args.only_ingest:
        files = _simulated(args.sessions_per_day, args.format)
        size_mb = sum(p.stat().st_size for p in files) / 1e6
        print(f"{len(files)} files, {size_mb:,.0f} MB")
        figures = ingest_against_floor(files, args.format, args.only_ingest)
        (BENCH_DIR / "last_ingest_run.json").write_text(json.dumps(figures, indent=2))
        return
    if args.only_replay:
        figures = replay_bench(args.replay_scale, args.replay_sessions_per_day, args.replay_days)
        (BENCH_DIR / "last_replay_run.json").write_text(json.dumps(figures, indent=2))
        return
    settings, figures, accepted = _ingest_figures(args)
    if not args.skip_build:
        figures.update(_build_figures(args, settings, accepted))
    if args.replay_scale:
        figures.update(
            replay_bench(args.replay_scale, args.replay_sessions_per_day, args.replay_days)
        )
    if args.refresh_sessions_per_day:
        from benchmarks import refresh as bench_refresh

        figures.update(bench_refresh.run(args.refresh_sessions_per_day, tenants=5))
    (BENCH_DIR / "last_run.json").write_text(json.dumps(figures, indent=2))


def _ingest_figures(args: argparse.Namespace) -> tuple[Settings, dict, int]:
    """The collector, the bare read, `ledger ingest` of the bench month into a fresh bench home,
    the typed parse and the store-once floor; returns the home, the figures and the events
    accepted."""
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
    settings = Settings.from_env({**os.environ, "LEDGER_HOME": str(home)})
    os.environ.update(settings.as_environment())  # for what the bench starts (board renders)
    from ledger.ingest import ingest_paths

    started, cpu_started = time.perf_counter(), time.process_time()
    results = ingest_paths(settings, files)
    ingest_seconds = time.perf_counter() - started
    ingest_cpu = time.process_time() - cpu_started
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
    cpu_started = time.process_time()
    floor_rows, floor_seconds = store_once_floor_seconds(
        files, args.format, BENCH_DIR / "floor" / "store-once.parquet"
    )
    floor_cpu = time.process_time() - cpu_started
    print(
        f"store-once floor:  {floor_rows:,} rows typed and written once to Parquet in "
        f"{floor_seconds:.2f}s; the ingest takes {ingest_seconds / floor_seconds:.1f}x it "
        f"(goal: <= 2x); CPU seconds (all threads): ingest {ingest_cpu:.2f}, floor "
        f"{floor_cpu:.2f}, {ingest_cpu / floor_cpu:.1f}x"
    )
    figures["store_once_floor_seconds"] = round(floor_seconds, 2)
    figures["ingest_over_floor"] = round(ingest_seconds / floor_seconds, 2)
    figures["ingest_cpu_seconds"] = round(ingest_cpu, 2)
    figures["store_once_floor_cpu_seconds"] = round(floor_cpu, 2)
    figures["ingest_over_floor_cpu"] = round(ingest_cpu / floor_cpu, 2)
    if args.memory_mb:
        figures.update(ingest_memory(args.memory_mb))
    return settings, figures, accepted


def _build_figures(args: argparse.Namespace, settings: Settings, accepted: int) -> dict:
    """`ledger build` of the ingested home, then Spark beside it, publishing and board renders."""
    from ledger.commands.build import run_build

    figures: dict = {}
    outcome = run_build(settings)
    for line in outcome.lines:
        print(f"  {line}")
    print(f"ledger build:      {outcome.seconds:.1f}s on {accepted:,} events")
    figures["build_seconds"] = round(outcome.seconds, 1)
    figures["build_success"] = outcome.success
    if not args.no_spark and outcome.success:
        figures.update(spark_build_figures(settings, outcome.seconds))
    if outcome.success:
        figures.update(publish_times(settings))
        figures.update(board_render_times(settings, args.board_runs))
    return figures


if __name__ == "__main__":
    main()
