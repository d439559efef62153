"""The one way tests build a home (`build_home`: the pipeline's own Dagster job) and the data the
shared homes are built from."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import duckdb

from ledger.core.settings import REPO_ROOT, Settings

FIXTURES_DIR = Path(__file__).resolve().parent.parent / "fixtures"

# ---- the ledger warehouse (tests/pipeline/conftest.py) -------------------------------------------

LEDGER_REFERENCE_DIR = REPO_ROOT / "data" / "reference"
# Simulated traffic around the deepseek price change of 2026-11-16 (shared catalogue).
LEDGER_SIMULATION = {"tenants": 4, "days": 2, "start": date(2026, 11, 15), "sessions_per_day": 8}

LEDGER_PROVIDER_BILL = FIXTURES_DIR / "ledger_provider_bill.csv"


def ledger_hand_made_events() -> list[dict]:
    """Sessions whose ledger rows are worked out by hand in tests/pipeline/test_ledger_dbt.py
    (`tests/fixtures/ledger_hand_made_events.jsonl`, described in `tests/fixtures/README.md`).

    The newest event of the warehouse is hand-open's last one (2026-11-17 03:00 UTC); the simulated
    traffic ends on 2026-11-16 16:00 UTC.
    """
    path = FIXTURES_DIR / "ledger_hand_made_events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def ledger_insert_events(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    """Append contract-shaped rows straight to raw.events (naive UTC timestamps)."""
    from ledger.warehouse import append_events

    append_events(con, rows)


@dataclass(frozen=True)
class LedgerWarehouse:
    settings: Settings
    dbt_results: dict[str, str]  # unique_id -> status of the build's `dbt build`


# ---- the boards fixture (`boards_home`, tests/conftest.py) ---------------------------------------
#
# Every figure the board tests assert is worked out by hand from these events, the shipped rate card
# and price plans (all times UTC; the business dates in Asia/Shanghai are the same dates):
#
# | session  | tenant       | date       | revenue                       | cost              |
# |----------|--------------|------------|-------------------------------|-------------------|
# | acme-s0  | acme-telecom | 2025-03-09 | 60 s -> 1 min x 0.60 = 0.60   | ASR 60 s = 0.0144 |
# | acme-s1  | acme-telecom | 2025-03-10 | 150 s -> 3 min x 0.60 = 1.80  | 0.6838 (below)    |
# | kiddo-s1 | kiddo-toys   | 2025-03-11 | 0.10 + 100 s x 0.90/60 = 1.60 | 0.125 (below)     |
#
# acme-s1: ASR 120 s x 0.0144/60 = 0.0288; deepseek-chat 100k input x 2.00/M = 0.20, 200k cached x
# 0.50/M = 0.10, 10k output x 8.00/M = 0.08 (LLM 0.38; the prefix cache saves 200k x 1.50/M = 0.30);
# cosyvoice 1000 chars x 2.00/10k = 0.20 and a 500-char cache hit (costs 0, saves 0.10); PSTN 2.5
# path-minutes x 0.03 = 0.075; an `acme-llm/x` call with no price (3 unpriced lines, not counted).
# One false interruption in turn 0 wastes 5000 output tokens (0.04) and 250 TTS chars (0.05) = 0.09.
# kiddo-s1: qwen-turbo 50k input x 0.30/M + 25k output x 0.60/M = 0.03; 10 images x 0.008 = 0.08 and
# a 4-image cache hit (saves 0.032); gpu_path 1.25 path-minutes x 0.012 = 0.015: total 0.125, which
# rounds half-even to 0.12 (half-up would show 0.13). One tts_filler degradation.
# Latency (ms, pipeline order): acme-s1 turn 0 200/100/400/100/50, turn 1 300/120/250/110/40;
# kiddo-s1 turn 0 100/60/200/70/20. acme is customer_service, kiddo hardware.

BOARDS_REFERENCE_DIR = REPO_ROOT / "data" / "reference"
# The events above are `tests/fixtures/boards_landing/boards-fixture.jsonl`; `boards-bad-rows.jsonl`
# holds two rows the ingest quarantines (malformed JSON, an unknown field).
BOARDS_LANDING = FIXTURES_DIR / "boards_landing"


def boards_write_landing(landing: Path) -> None:
    """The fixture's landing files, copied into `landing`."""
    shutil.copytree(BOARDS_LANDING, landing, dirs_exist_ok=True)


# ---- the one way tests build a home: the pipeline's own Dagster job ------------------------------

# The simulated month lies in the future of some clocks: files are ingested as of after it (the
# job's own ingest step then finds nothing new and uses no clock).
INGEST_TIME = datetime(2027, 1, 1)


def build_home(
    root: Path,
    *,
    reference_dir: Path = LEDGER_REFERENCE_DIR,
    simulation: dict | None = None,
    landing_files: Callable[[Path], None] | None = None,
    raw_rows: list[dict] | None = None,
    provider_bills: tuple[Path, ...] = (),
    ingest_time: datetime = INGEST_TIME,
    settings_fields: dict | None = None,
) -> Settings:
    """A home under `root` built and published by the job `build_ledger` (`ledger build`).

    Its landing folder gets `simulation` (keyword arguments of `ledger.simulate.simulate`) and/or
    the files `landing_files(landing)` writes; they are ingested as of `ingest_time`; `raw_rows`
    (hand-made events, some of which the contract would refuse) go straight into raw.events, and
    `provider_bills` are imported (`ledger reconcile import`). Then the job loads the reference
    data, runs `dbt build` and publishes the marts. `settings_fields` sets other settings.
    """
    from ledger.commands.build import run_build
    from ledger.finops.provider_costs import import_provider_costs
    from ledger.ingest import ingest_paths
    from ledger.simulate import simulate
    from ledger.warehouse import connect, ensure_raw_schema

    settings = Settings(home=root / "home", reference_dir=reference_dir, **(settings_fields or {}))
    settings.ensure_dirs()
    if simulation is not None:
        simulate(settings.landing_dir, **simulation)
    if landing_files is not None:
        landing_files(settings.landing_dir)
    ingest_paths(settings, [settings.landing_dir], ingest_time=ingest_time)
    if raw_rows:
        with connect(settings.warehouse_path) as con:
            ensure_raw_schema(con)
            ledger_insert_events(con, raw_rows)
    for bill in provider_bills:
        import_provider_costs(settings, bill)
    outcome = run_build(settings)
    assert outcome.success, "\n".join(outcome.lines)
    return settings


def dbt_run_results(settings: Settings) -> dict[str, str]:
    """unique_id -> status of the last dbt invocation of the home (its run_results.json)."""
    results = json.loads((settings.dbt_target_dir / "run_results.json").read_text())
    return {r["unique_id"]: r["status"] for r in results["results"]}
