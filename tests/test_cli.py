"""The `ledger` command as a user meets it: messages, exit codes, where things went."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ledger.commands.cli import main
from ledger.core.settings import Settings
from ledger.pipeline.transform import dbt_vars
from ledger.serving.links import board_link, relative_board_link


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path / "home"))
    for name in ("LEDGER_REFERENCE_DIR", "LEDGER_TIMEZONE", "LEDGER_REPORTING_CURRENCY"):
        monkeypatch.delenv(name, raising=False)
    return CliRunner()


def test_schema_prints_the_contract_as_json_schema(runner: CliRunner) -> None:
    result = runner.invoke(main, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert len(schema["oneOf"]) == 13  # contract v1.1: cost.reported and turn.shadow
    assert schema["discriminator"]["propertyName"] == "event_type"


def test_simulate_then_ingest_reports_each_file_and_the_totals(
    runner: CliRunner, tmp_path: Path
) -> None:
    landing = tmp_path / "home" / "landing"  # named paths must be in the landing folder
    simulated = runner.invoke(
        main,
        [
            "simulate",
            "--out",
            str(landing),
            "--tenants",
            "1",
            "--days",
            "1",
            "--sessions-per-day",
            "3",
        ],
    )
    assert simulated.exit_code == 0, simulated.output
    files = sorted(p for p in landing.rglob("*.jsonl"))

    ingested = runner.invoke(main, ["ingest", str(landing)])
    assert ingested.exit_code == 0, ingested.output
    for path in files:
        assert f"{path}: " in ingested.output
    assert f"{len(files)} files ingested (0 already ingested)" in ingested.output

    again = runner.invoke(main, ["ingest", str(landing)])
    assert f"0 files ingested ({len(files)} already ingested)" in again.output
    assert "already ingested (same content), nothing changed" in again.output


def test_ingest_of_a_missing_path_fails_with_the_path_named(runner: CliRunner) -> None:
    result = runner.invoke(main, ["ingest", "/nowhere/events.jsonl"])
    assert result.exit_code == 1
    assert "/nowhere/events.jsonl: no such file or folder to ingest" in result.output


def test_a_bad_setting_fails_with_the_variable_and_an_example(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEDGER_TIMEZONE", "Mars/Olympus")
    result = runner.invoke(main, ["ingest"])
    assert result.exit_code == 2
    assert "LEDGER_TIMEZONE must be an IANA zone such as Asia/Shanghai" in result.output


def test_export_refuses_an_unknown_file_type(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["export", "session-ledger", "--out", str(tmp_path / "x.xlsx")])
    assert result.exit_code == 2
    assert "--out must end in .csv or .parquet" in result.output


def test_a_deep_link_is_the_boards_address_the_page_and_its_sorted_filters() -> None:
    settings = Settings.from_env({"LEDGER_BOARDS_URL": "https://ledger.example.com/boards/"})
    assert settings.boards_url == "https://ledger.example.com/boards"
    link = board_link(
        settings.boards_url,
        "margin",
        {"tenant": ["bright-bank", "acme & co"], "start": "2026-11-20", "end": None, "x": ""},
    )
    assert link == (
        "https://ledger.example.com/boards/margin"
        "?start=2026-11-20&tenant=bright-bank&tenant=acme+%26+co"
    )
    # The Overview is the default page, served at the root: `/overview` is "Page not found".
    assert board_link(Settings().boards_url, "overview") == "http://127.0.0.1:8501/"
    assert board_link(settings.boards_url, "overview", {"tenant": "bright-bank"}) == (
        "https://ledger.example.com/boards/?tenant=bright-bank"
    )
    # From page to page, relative: the root of the boards is `./`, never an empty path.
    assert relative_board_link("overview", {"to": "2026-11-20"}) == "./?to=2026-11-20"
    assert relative_board_link("sessions", {"to": "2026-11-20"}) == "sessions?to=2026-11-20"
    with pytest.raises(ValueError, match="no board page 'budget'"):
        board_link(settings.boards_url, "budget")


def test_the_boards_address_must_be_http_without_a_query() -> None:
    with pytest.raises(ValueError, match="LEDGER_BOARDS_URL must be the boards' base address"):
        Settings.from_env({"LEDGER_BOARDS_URL": "ledger.example.com?x=1"})


def test_the_build_memory_limit_is_a_size_duckdb_takes() -> None:
    for given, taken in (("8GB", "8GB"), ("512 MiB", "512MiB"), ("50%", "50%")):
        limit = Settings.from_env({"LEDGER_BUILD_MEMORY_LIMIT": given}).build_memory_limit
        assert limit == taken
        duckdb.connect().execute(f"set memory_limit = '{limit}'")
    assert Settings().build_memory_limit == "50%"
    assert dbt_vars(Settings(build_memory_limit="2GB"))["build_memory_limit"] == "2GB"
    for refused in ("lots", "150%", "8 G", "0%", "0.0GB"):
        with pytest.raises(ValueError, match="LEDGER_BUILD_MEMORY_LIMIT must be a size above zero"):
            Settings.from_env({"LEDGER_BUILD_MEMORY_LIMIT": refused})
