"""Shared fixtures. Each area prefixes its fixtures (`ledger_...`); append, never rewrite."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import duckdb
import pytest

from ledger.core.settings import REPO_ROOT, Settings

# ---- markers -------------------------------------------------------------------------------------

# Session fixtures that build a warehouse (dbt, Dagster): a test using any of them, directly or
# through another fixture, is an `integration` test (`make test-fast` leaves those out).
BUILD_FIXTURES = frozenset(
    {
        "ledger_built_warehouse",
        "ops_template_home",
        "boards_home",
        "collect_run",
        "finops_home",
        "pipeline_home",
        "planning_home",
    }
)


# `make test` runs two pytest-xdist workers with `--dist loadfile`: each worker takes a file at a
# time, and a session fixture is built once per worker that asks for it. The files that share a
# warehouse-building fixture are therefore scheduled as one unit (`pytest_xdist_make_scheduler`
# below), so that each of those warehouses is built once; the Spark unit first, the other shared
# units next, so that the longest builds overlap the rest instead of running alone at the end.
# (pytest-xdist's own `loadgroup` cannot do this under pytest 9: it renames the test ids through
# an attribute pytest no longer reads.) A file that starts to use one of these fixtures must join
# its unit here; the collection refuses to run until it does.
WORKER_UNITS: dict[str, tuple[str, ...]] = {
    "spark+ledger_built_warehouse": (
        "tests/test_spark.py",
        "tests/test_ledger_dbt.py",
        "tests/test_publish.py",
    ),
    "boards_home+planning_home": (
        "tests/test_boards.py",
        "tests/test_boards_access.py",
        "tests/test_boards_browser.py",
        "tests/test_capacity.py",
        "tests/test_operations_board.py",
        "tests/test_replay.py",
        "tests/test_shadow.py",
        "tests/test_whatif.py",
    ),
    "ops_template_home": (
        "tests/test_alerts.py",
        "tests/test_alerts_webhook.py",
        "tests/test_metric_layer.py",
        "tests/test_weekly_report.py",
    ),
}
_UNIT_OF_FILE = {path: unit for unit, paths in WORKER_UNITS.items() for path in paths}


def _unit_of(nodeid: str) -> str:
    """A test's scheduling unit: its file's unit in WORKER_UNITS, else its file."""
    path = nodeid.split("::")[0]
    return _UNIT_OF_FILE.get(path, path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if BUILD_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
    check_worker_units(items)
    items.sort(key=_schedule_rank)


_UNIT_RANK = {unit: rank for rank, unit in enumerate(WORKER_UNITS)}


def _schedule_rank(item: pytest.Item) -> int:
    """The units in the order of WORKER_UNITS, then every other file (a stable sort)."""
    return _UNIT_RANK.get(_unit_of(item.nodeid), len(WORKER_UNITS))


def check_worker_units(items: list[pytest.Item]) -> None:
    """Every warehouse-building fixture used by more than one file is used within one unit."""
    files_of: dict[str, set[str]] = {}
    for item in items:
        for fixture in BUILD_FIXTURES & set(getattr(item, "fixturenames", ())):
            files_of.setdefault(fixture, set()).add(item.nodeid.split("::")[0])
    for fixture, files in sorted(files_of.items()):
        if len({_unit_of(path) for path in files}) > 1:
            raise pytest.UsageError(
                f"{', '.join(sorted(files))} share the session fixture {fixture} but not a unit of "
                "WORKER_UNITS (tests/conftest.py): put them in one, so that `make test` builds "
                "that warehouse once"
            )


# `optionalhook`: a run without pytest-xdist (`-p no:xdist`) does not know this hook.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`--dist loadfile`, with the files of each unit of WORKER_UNITS scheduled as one."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit_of(nodeid)

    # Keep the collection's order (the units first) instead of xdist's largest-scope-first.
    config.option.loadscopereorder = False
    return UnitScheduling(config, log)


# ---- ledger (dbt models): one warehouse, built once per test session ------------------------------

LEDGER_REFERENCE_DIR = REPO_ROOT / "data" / "reference"
# Simulated traffic around the deepseek price change of 2026-11-16 (shared catalogue).
LEDGER_SIMULATION = {"tenants": 4, "days": 2, "start": date(2026, 11, 15), "sessions_per_day": 8}


FIXTURES_DIR = Path(__file__).parent / "fixtures"
LEDGER_PROVIDER_BILL = FIXTURES_DIR / "ledger_provider_bill.csv"


def ledger_hand_made_events() -> list[dict]:
    """Sessions whose ledger rows are worked out by hand in tests/test_ledger_dbt.py
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
) -> Settings:
    """A home under `root` built and published by the job `build_ledger` (`ledger build`).

    Its landing folder gets `simulation` (keyword arguments of `ledger.simulate.simulate`) and/or
    the files `landing_files(landing)` writes; they are ingested as of `ingest_time`; `raw_rows`
    (hand-made events, some of which the contract would refuse) go straight into raw.events, and
    `provider_bills` are imported (`ledger reconcile import`). Then the job loads the reference
    data, runs `dbt build` and publishes the marts.
    """
    from ledger.commands.build import run_build
    from ledger.finops.provider_costs import import_provider_costs
    from ledger.ingest import ingest_paths
    from ledger.simulate import simulate
    from ledger.warehouse import connect, ensure_raw_schema

    settings = Settings(home=root / "home", reference_dir=reference_dir)
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


@dataclass(frozen=True)
class LedgerWarehouse:
    settings: Settings
    dbt_results: dict[str, str]  # unique_id -> status of the build's `dbt build`


@pytest.fixture(scope="session")
def ledger_built_warehouse(tmp_path_factory: pytest.TempPathFactory) -> LedgerWarehouse:
    """Simulated traffic plus the hand-made sessions, built and published by the job."""
    settings = build_home(
        tmp_path_factory.mktemp("ledger"),
        simulation={"bad_row_share": 0.0, "duplicate_share": 0.0, **LEDGER_SIMULATION},
        raw_rows=ledger_hand_made_events(),
        provider_bills=(LEDGER_PROVIDER_BILL,),
    )
    return LedgerWarehouse(settings, dbt_run_results(settings))


@pytest.fixture
def ledger_query(ledger_built_warehouse: LedgerWarehouse) -> Callable[..., list[dict]]:
    """Run SQL read-only on the built warehouse; rows as dicts."""

    def query(sql: str, params: list | None = None) -> list[dict]:
        path = ledger_built_warehouse.settings.warehouse_path
        with duckdb.connect(str(path), read_only=True) as con:
            cursor = con.execute(sql, params or [])
            names = [column[0] for column in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    return query


@pytest.fixture(scope="session")
def ledger_warehouse_path(ledger_built_warehouse: LedgerWarehouse) -> Path:
    return ledger_built_warehouse.settings.warehouse_path


# ---- ops (alerts and weekly review): a month-like warehouse, built once per test session ---------

# Two tenants (acme-telecom, bright-bank) from 2026-11-01: bright-bank's LLM prefix cache breaks on
# 2026-11-20 and 2026-11-21, the last day of the data (so 2026-11-21 is not closed yet).
OPS_SIMULATION = {"tenants": 2, "days": 21, "start": date(2026, 11, 1), "seed": 7}


@pytest.fixture(scope="session")
def ops_template_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built and published home; tests copy it, never change it."""
    return build_home(tmp_path_factory.mktemp("ops"), simulation=OPS_SIMULATION).home


@pytest.fixture
def ops_settings(ops_template_home: Path, tmp_path: Path) -> Settings:
    """Settings of a private copy of the ops warehouse (alerts and reports write to it)."""
    from ledger.warehouse import copy_warehouse

    home = tmp_path / "home"
    home.mkdir()
    copy_warehouse(ops_template_home / "warehouse.duckdb", home / "warehouse.duckdb")
    shutil.copytree(ops_template_home / "published", home / "published")
    return Settings(home=home, reference_dir=LEDGER_REFERENCE_DIR)


# ---- boards (Streamlit): a published copy of hand-made traffic, built once per test session ------
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
    import shutil

    shutil.copytree(BOARDS_LANDING, landing, dirs_exist_ok=True)


@pytest.fixture(scope="session")
def boards_home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A published copy of the fixture traffic, built by the job."""
    return build_home(
        tmp_path_factory.mktemp("boards"),
        reference_dir=BOARDS_REFERENCE_DIR,
        landing_files=boards_write_landing,
        ingest_time=datetime(2026, 1, 1),
    )


# ---- planning (shadow mode, capacity, replay, what-if): one shadow-enabled week -------------------

# Two tenants for the ISO week 2026-W45 with the simulator's shadow candidate `eou-v2`: better on
# acme-telecom, worse on bright-bank (ledger.simulate.shadow).
PLANNING_SIMULATION = {
    "tenants": 2,
    "days": 7,
    "start": date(2026, 11, 2),
    "sessions_per_day": 6,
    "shadow": True,
    "bad_row_share": 0.0,
    "duplicate_share": 0.0,
}


@pytest.fixture(scope="session")
def planning_home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A published copy of PLANNING_SIMULATION, built by the job; tests never change it."""
    return build_home(tmp_path_factory.mktemp("planning"), simulation=PLANNING_SIMULATION)
