"""`ledger backup` and `ledger restore` (SPEC 14): a restored home builds and publishes the same
session ledger export, byte for byte, and keeps the ops state no build can make again."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
from click.testing import CliRunner

from dagster_project.pipeline import run_build_job
from ledger.alerts.run import run_alerts
from ledger.commands.cli import main
from ledger.core.settings import Settings
from ledger.serving.export import export_session_ledger

NOW = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)


def _rows(settings: Settings, sql: str) -> list[tuple]:
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_a_restored_home_publishes_the_same_export_byte_for_byte(
    ops_settings: Settings, tmp_path: Path
) -> None:
    # Ops state only the running installation makes: the anomalies of an alert run.
    run_alerts(ops_settings, date(2026, 11, 20), now=NOW, echo=None)
    anomalies = _rows(ops_settings, "select * from ops.anomalies order by all")
    assert len(anomalies) == 1
    export_session_ledger(ops_settings, tmp_path / "original.csv")
    environment = {"LEDGER_HOME": str(ops_settings.home)}
    environment["LEDGER_REFERENCE_DIR"] = str(ops_settings.reference_dir)

    result = CliRunner().invoke(main, ["backup", str(tmp_path / "backup")], env=environment)
    assert result.exit_code == 0, result.output
    (events,) = _rows(ops_settings, "select count(*) from raw.events")[0]
    assert result.output.startswith(f"backed up into {tmp_path / 'backup'}: ")
    landing = [p for p in ops_settings.landing_dir.rglob("*") if p.is_file()]
    assert result.output.endswith(
        f"raw event files ({events:,} events), {len(landing)} landing files\n"
    )
    # A backup never lands on top of something else.
    again = CliRunner().invoke(main, ["backup", str(tmp_path / "backup")], env=environment)
    assert again.output == (
        f"Error: {tmp_path / 'backup'} is not an empty folder: a backup needs a new or empty one\n"
    )

    home = tmp_path / "restored"
    result = CliRunner().invoke(
        main, ["restore", str(tmp_path / "backup")], env={"LEDGER_HOME": str(home)}
    )
    assert result.exit_code == 0, result.output
    restored = Settings(home=home, reference_dir=home / "reference")
    assert _rows(restored, "select * from ops.anomalies order by all") == anomalies
    assert _rows(restored, "select count(*) from raw.events") == [(events,)]
    assert sorted(p.name for p in restored.reference_dir.iterdir()) == sorted(
        p.name for p in ops_settings.reference_dir.iterdir()
    )

    outcome = run_build_job(restored)
    assert outcome.success, outcome.lines
    export_session_ledger(restored, tmp_path / "restored.csv")
    assert (tmp_path / "restored.csv").read_bytes() == (tmp_path / "original.csv").read_bytes()
    # Its file ids go on from the backed-up ones: a new file never reuses one.
    with duckdb.connect(str(restored.warehouse_path)) as con:
        (next_id,) = con.execute("select nextval('raw.file_id_seq')").fetchone()
    assert next_id == _rows(ops_settings, "select max(file_id) + 1 from raw.ingested_files")[0][0]

    refused = CliRunner().invoke(
        main, ["restore", str(tmp_path / "backup")], env={"LEDGER_HOME": str(home)}
    )
    assert refused.output == (
        f"Error: {home} already has a warehouse: restore into a new home (LEDGER_HOME)\n"
    )
