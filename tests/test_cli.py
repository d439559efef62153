"""The `ledger` command as a user meets it: messages, exit codes, where things went."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ledger.commands.cli import main


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
