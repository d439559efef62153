"""The Dagster code location and the `ledger build` job, materialised for real."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import duckdb
import pytest
from dagster import AssetKey, RunRequest, build_sensor_context

from ledger.commands.build import run_build
from ledger.core.settings import REPO_ROOT, Settings
from ledger.simulate import simulate


@pytest.fixture(scope="module")
def pipeline_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("pipeline") / "home"
    simulate(
        home / "landing",
        tenants=2,
        days=2,
        start=date(2026, 11, 15),
        sessions_per_day=4,
    )
    return home


@pytest.fixture
def env_home(pipeline_home: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("LEDGER_HOME", str(pipeline_home))
    monkeypatch.delenv("LEDGER_REFERENCE_DIR", raising=False)
    return Settings.from_env()


def _published(settings: Settings, sql: str) -> list[tuple]:
    with duckdb.connect(str(settings.published_path), read_only=True) as con:
        return con.execute(sql).fetchall()


def _warehouse(settings: Settings, sql: str) -> list[tuple]:
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        return con.execute(sql).fetchall()


# The lineage, landing to boards. A change here is a change to what the pipeline produces: update
# this list on purpose, never by accident.
ASSET_KEYS = [
    "intermediate/int_billed_costs_converted",
    "intermediate/int_cost_groups_resolved",
    "intermediate/int_interruption_waste_priced",
    "intermediate/int_latency_budget_cells_aggregated",
    "intermediate/int_pool_load_minutely",
    "intermediate/int_pool_load_session_minutely",
    "intermediate/int_reported_costs_converted",
    "intermediate/int_session_component_costs",
    "intermediate/int_session_experience_aggregated",
    "intermediate/int_sessions_billed",
    "intermediate/int_sessions_resolved",
    "intermediate/int_shadow_turns_compared",
    "intermediate/int_slo_turn_segments",
    "intermediate/int_tenant_concurrency_stepped",
    "intermediate/int_tenant_experience_aggregated",
    "intermediate/int_turn_segments_budgeted",
    "intermediate/int_turn_segments_measured",
    "intermediate/int_usage_lines_priced",
    "intermediate/int_usage_lines_unpivoted",
    "marts/dim_latency_budget_owners",
    "marts/dim_reference_meta",
    "marts/dim_spend_budgets",
    "marts/fct_capacity_pool_hourly",
    "marts/fct_capacity_pool_weekly",
    "marts/fct_capacity_tenant_hourly",
    "marts/fct_cost_by_phase_route",
    "marts/fct_degradations",
    "marts/fct_experience_tenant_daily",
    "marts/fct_focus_charges",
    "marts/fct_focus_unpriced_usage",
    "marts/fct_ingested_files",
    "marts/fct_interruptions",
    "marts/fct_latency_budget_tenant_daily",
    "marts/fct_latency_burn_rates",
    "marts/fct_latency_leverage",
    "marts/fct_latency_slo",
    "marts/fct_latency_slo_owner",
    "marts/fct_quarantined_rows",
    "marts/fct_reconciliation_daily",
    "marts/fct_reported_costs_held",
    "marts/fct_session_experience",
    "marts/fct_session_ledger",
    "marts/fct_shadow_comparison_daily",
    "marts/fct_shadow_comparison_weekly",
    "marts/fct_spend_daily",
    "marts/fct_tenant_daily_margin",
    "marts/fct_tenant_weekly_margin",
    "marts/fct_turn_latency",
    "marts/fct_usage_cost_daily",
    "marts/fct_usage_lines",
    "ops/budget_alerts",
    "ops/refresh_events",
    "ops/refresh_state",
    "published/marts",
    "raw/events",
    "raw/ingested_files",
    "raw/quarantine",
    "reference/fx_rates",
    "reference/latency_budgets",
    "reference/meta",
    "reference/model_aliases",
    "reference/planning_settings",
    "reference/price_plans",
    "reference/provider_aliases",
    "reference/rate_card",
    "reference/spend_budgets",
    "staging/stg_metering__asr_usage",
    "staging/stg_metering__events",
    "staging/stg_metering__infra_usage",
    "staging/stg_metering__llm_usage",
    "staging/stg_metering__realtime_usage",
    "staging/stg_metering__reported_costs",
    "staging/stg_metering__session_degradations",
    "staging/stg_metering__session_ends",
    "staging/stg_metering__session_starts",
    "staging/stg_metering__tts_usage",
    "staging/stg_metering__turn_interruptions",
    "staging/stg_metering__turn_latencies",
    "staging/stg_metering__turn_shadows",
    "staging/stg_metering__vision_usage",
    "staging/stg_reference__capacity_planning",
    "staging/stg_reference__fx_rates",
    "staging/stg_reference__latency_budgets",
    "staging/stg_reference__meta",
    "staging/stg_reference__model_aliases",
    "staging/stg_reference__price_plans",
    "staging/stg_reference__provider_aliases",
    "staging/stg_reference__rate_card",
    "staging/stg_reference__spend_budgets",
]


def test_asset_keys_match_the_lineage_snapshot() -> None:
    from dagster_project.definitions import load_definitions

    defs = load_definitions()

    assert sorted(key.to_user_string() for key in defs.resolve_all_asset_keys()) == ASSET_KEYS


def test_dbt_sources_are_the_ingest_and_reference_assets_and_publish_follows_the_marts() -> None:
    from dagster_project.definitions import load_definitions

    defs = load_definitions()

    graph = defs.resolve_asset_graph()
    staging = graph.get(AssetKey(["staging", "stg_metering__events"]))
    # Staging reads all events on a full refresh, the refresh plan's events on an incremental one.
    assert staging.parent_keys == {AssetKey(["raw", "events"]), AssetKey(["ops", "refresh_events"])}
    rates = graph.get(AssetKey(["staging", "stg_reference__rate_card"]))
    assert rates.parent_keys == {AssetKey(["reference", "rate_card"])}
    published = graph.get(AssetKey(["published", "marts"]))
    assert AssetKey(["marts", "fct_session_ledger"]) in published.parent_keys


def test_building_twice_ingests_once_and_publishes_the_same_ledger(env_home: Settings) -> None:
    first = run_build(env_home)
    assert first.success, "\n".join(first.lines)
    totals_sql = "select count(*), sum(total_cost), sum(revenue) from marts.fct_session_ledger"
    sessions, cost, revenue = _published(env_home, totals_sql)[0]
    events = _warehouse(env_home, "select count(*) from raw.events")[0][0]
    files = _warehouse(env_home, "select count(*) from raw.ingested_files")[0][0]
    assert sessions > 0 and cost > 0 and revenue > 0

    second = run_build(env_home)

    assert second.success, "\n".join(second.lines)
    assert "ingest: 0 new files" in second.lines[0]
    assert _warehouse(env_home, "select count(*) from raw.events")[0][0] == events
    assert _warehouse(env_home, "select count(*) from raw.ingested_files")[0][0] == files
    assert _published(env_home, totals_sql) == [(sessions, cost, revenue)]
    assert _published(env_home, "select events from publication") == [(events,)]


def test_a_failed_build_keeps_the_previous_published_copy(
    env_home: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not env_home.published_path.exists():
        assert run_build(env_home).success
    before = env_home.published_path.read_bytes()
    broken = tmp_path / "reference"
    shutil.copytree(REPO_ROOT / "data" / "reference", broken)
    rate_card = broken / "rate_card.csv"
    rate_card.write_text(
        rate_card.read_text() + "aliyun,cosyvoice-v2,tts.kilobytes,1,1,CNY,2025-01-01,\n"
    )
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(broken))

    outcome = run_build(Settings.from_env())

    assert not outcome.success
    failure = next(line for line in outcome.lines if line.startswith("failed step"))
    assert "rate_card.csv" in failure and "tts.kilobytes" in failure
    assert env_home.published_path.read_bytes() == before


def test_landing_sensor_requests_a_build_only_for_new_files(env_home: Settings) -> None:
    from dagster_project.definitions import load_definitions

    defs = load_definitions()

    sensor = defs.resolve_sensor_def("landing_files_sensor")
    resources = {"warehouse": defs.resources["warehouse"]}

    with build_sensor_context(resources=resources) as context:
        first = sensor.evaluate_tick(context)
    assert len(first.run_requests) == 1
    assert isinstance(first.run_requests[0], RunRequest)
    cursor = first.cursor

    with build_sensor_context(resources=resources, cursor=cursor) as context:
        again = sensor.evaluate_tick(context)
    assert again.run_requests == []
    assert isinstance(again.skip_message, str) and "no new landing files" in again.skip_message

    newer = env_home.landing_dir / "2026-12-01" / "late.jsonl"
    newer.parent.mkdir(parents=True, exist_ok=True)
    newer.write_text("")
    try:
        with build_sensor_context(resources=resources, cursor=cursor) as context:
            after = sensor.evaluate_tick(context)
        assert len(after.run_requests) == 1
    finally:
        newer.unlink()
        newer.parent.rmdir()
