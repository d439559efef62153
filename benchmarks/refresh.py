"""Refresh cost against history (issue 11): one new day on top of 30 and of 365 days of history at
the same daily volume, each a `ledger build` after the new day's files land.

    python -m benchmarks.refresh [--sessions-per-day 2] [--tenants 2] [--repeats 2]
        [--engine duckdb|spark]

`make bench` runs it after the ingest figures (`--refresh-sessions-per-day`). The traffic is
simulated once (cached under data/bench/); each history is ingested and built in full (untimed),
then the same new day lands and the timed build refreshes it incrementally (the history is
restored from a copy before each repeat; the two histories alternate). Goal: the 365-day
refresh takes at most 1.3x the 30-day one. `--engine spark` builds on Spark's local session
(LEDGER_ENGINE=spark): the restored history then also holds the Parquet tables Spark wrote.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from datetime import date, timedelta
from pathlib import Path

from ledger.core.settings import REPO_ROOT, Settings

BENCH_DIR = REPO_ROOT / "data" / "bench"
HISTORIES = (30, 365)
# The new day; the histories end the day before.
NEW_DAY = date(2026, 11, 30)


def _simulated_days(sessions_per_day: int, tenants: int) -> Path:
    from ledger.simulate import simulate

    days = max(HISTORIES) + 1
    folder = BENCH_DIR / f"refresh-{tenants}x{sessions_per_day}"
    marker = folder / ".complete"
    if not marker.exists():
        shutil.rmtree(folder, ignore_errors=True)
        simulate(
            folder,
            tenants=tenants,
            days=days,
            start=NEW_DAY - timedelta(days=days - 1),
            sessions_per_day=sessions_per_day,
            bad_row_share=0.0,
            duplicate_share=0.0,
        )
        marker.write_text("ok")
    return folder


def _day_files(folder: Path, first: date, last: date) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*.jsonl") if first.isoformat() <= p.parent.name <= last.isoformat()
    )


def _history_home(folder: Path, history_days: int, engine: str) -> tuple[Settings, Path, int]:
    """A home with `history_days` days ingested and built in full, and a copy of its warehouse
    to restore before each timed refresh."""
    from ledger.commands.build import run_build
    from ledger.ingest import ingest_paths
    from ledger.warehouse import copy_warehouse

    home = BENCH_DIR / f"refresh-home-{engine}-{history_days}"
    shutil.rmtree(home, ignore_errors=True)
    settings = Settings.from_env().model_copy(update={"home": home, "engine": engine})
    settings.ensure_dirs()
    history = _day_files(folder, NEW_DAY - timedelta(days=history_days), NEW_DAY - timedelta(1))
    results = ingest_paths(settings, history)
    first = run_build(settings)
    if not first.success:
        raise RuntimeError("\n".join(first.lines))
    base = BENCH_DIR / f"refresh-base-{engine}-{history_days}" / "base.duckdb"
    shutil.rmtree(base.parent, ignore_errors=True)
    copy_warehouse(settings.warehouse_path, base)
    if engine == "spark":
        shutil.copytree(_spark_tables(settings), base.parent / "spark-tables")
    return settings, base, sum(r.accepted for r in results)


def _spark_tables(settings: Settings) -> Path:
    from ledger.pipeline.spark import tables_dir

    return tables_dir(settings)


def _week_files(folder: Path) -> dict[str, set[str]]:
    return {week.name: {p.name for p in week.glob("*.parquet")} for week in folder.glob("*=*")}


def partitions_rewritten(settings: Settings, base: Path) -> dict[str, tuple[int, int]]:
    """Spark: per week-partitioned mart, (weeks whose files the refresh replaced, weeks)."""
    found = {}
    for table in sorted((_spark_tables(settings) / "marts").iterdir()):
        after = _week_files(table)
        if after:
            before = _week_files(base.parent / "spark-tables" / "marts" / table.name)
            changed = sum(before.get(week) != files for week, files in after.items())
            found[table.name] = (changed, len(after))
    return found


def timed_refresh(settings: Settings, base: Path, folder: Path) -> tuple[float, list[str]]:
    """Restore the history, land the new day, time `ledger build`."""
    from ledger.commands.build import run_build
    from ledger.warehouse import copy_warehouse

    shutil.rmtree(settings.home / "raw", ignore_errors=True)
    copy_warehouse(base, settings.warehouse_path)
    if settings.engine == "spark":
        shutil.rmtree(_spark_tables(settings), ignore_errors=True)
        shutil.copytree(base.parent / "spark-tables", _spark_tables(settings))
    for path in _day_files(folder, NEW_DAY, NEW_DAY):
        target = settings.landing_dir / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    started = time.perf_counter()
    outcome = run_build(settings)
    seconds = time.perf_counter() - started
    if not outcome.success:
        raise RuntimeError("\n".join(outcome.lines))
    return seconds, outcome.lines


def node_seconds(settings: Settings) -> dict[str, float]:
    """Each dbt node's execution time in the home's last dbt invocation (its run_results.json)."""
    found = sorted(
        settings.dbt_target_dir.rglob("run_results.json"), key=lambda p: p.stat().st_mtime
    )
    if not found:
        return {}
    results = json.loads(found[-1].read_text())["results"]
    return {r["unique_id"].split(".", 2)[-1]: float(r["execution_time"]) for r in results}


def _slowest_nodes(timings: dict[int, dict[str, float]], top: int) -> None:
    """The nodes of the last refresh that took longest on the longest history, both histories
    side by side: what still grows with history."""
    longest, shortest = max(timings), min(timings)
    ranked = sorted(timings[longest], key=lambda n: -timings[longest][n])[:top]
    print(f"slowest dbt nodes of a refresh ({shortest} days -> {longest} days):")
    for node in ranked:
        before = timings[shortest].get(node)
        was = f"{before:.2f}s" if before is not None else "-"
        print(f"  {node:<70} {was:>7} -> {timings[longest][node]:.2f}s")
    for days in (shortest, longest):
        print(f"  all nodes on {days} days: {sum(timings[days].values()):.1f}s")


def run(
    sessions_per_day: int,
    tenants: int,
    repeats: int = 2,
    top_nodes: int = 12,
    engine: str = "duckdb",
) -> dict[str, float]:
    """The median of `repeats` timed refreshes per history, alternating the two histories so
    that a shared machine's load falls on both alike."""
    folder = _simulated_days(sessions_per_day, tenants)
    homes = {days: _history_home(folder, days, engine) for days in HISTORIES}
    timings: dict[int, list[float]] = {days: [] for days in HISTORIES}
    nodes: dict[int, dict[str, float]] = {}
    for _ in range(repeats):
        for days in HISTORIES:
            settings, base, _events = homes[days]
            seconds, lines = timed_refresh(settings, base, folder)
            timings[days].append(seconds)
            nodes[days] = node_seconds(settings)
            for line in lines:
                if line.startswith("refresh:"):
                    print(f"  {days} days: {line}")
            if engine == "spark":
                weeks = partitions_rewritten(settings, base)
                listed = ", ".join(f"{t} {n}/{total}" for t, (n, total) in weeks.items())
                print(f"  {days} days: weeks rewritten: {listed}")
    figures: dict[str, float] = {}
    for days in HISTORIES:
        median = sorted(timings[days])[len(timings[days]) // 2]
        runs = ", ".join(f"{s:.1f}" for s in timings[days])
        print(
            f"refresh on {days:>3} days: {median:.1f}s median of {runs} "
            f"(history: {homes[days][2]:,} events)"
        )
        figures[f"refresh_{days}d_seconds"] = round(median, 1)
    ratio = figures["refresh_365d_seconds"] / figures["refresh_30d_seconds"]
    print(f"refresh 365d / 30d = {ratio:.2f}x (goal: <= 1.3x)")
    figures["refresh_ratio"] = round(ratio, 2)
    if top_nodes and all(nodes.values()):
        _slowest_nodes(nodes, top_nodes)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions-per-day", type=int, default=2)
    parser.add_argument("--tenants", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--top-nodes", type=int, default=12, help="list this many of the slowest dbt nodes"
    )
    parser.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb")
    args = parser.parse_args()
    run(args.sessions_per_day, args.tenants, args.repeats, args.top_nodes, args.engine)


if __name__ == "__main__":
    main()
