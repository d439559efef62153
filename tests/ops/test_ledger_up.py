"""`ledger up` and the daemon (SPEC 14): one real `ledger up` per instance storage runs the Dagster
daemon and UI, the collector and the boards on a copy of the ops home. A batch posted to the
collector is picked up by the landing sensor, built and published; the daily alerts schedule
delivers to a local webhook and the weekly review schedule writes its documents, both fired within
minutes by their cron settings; SIGTERM stops everything. The same test runs with the instance in
SQLite and in PostgreSQL (a real server the test starts)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import psutil
import pytest
from click.testing import CliRunner

from ledger.commands.cli import main
from ledger.core.calendar import iso_week_of
from ledger.core.settings import REPO_ROOT, Settings
from ledger.serving.published_copy import open_published
from tests.support.services import (
    LedgerUp,
    WebhookReceiver,
    cron_at_next_minute,
    free_port,
    wait_for,
)

TOKEN = "up-test-token-0123456789"
SOURCE = "gw-up"


def _collector_config(folder: Path) -> Path:
    path = folder / "collector.yaml"
    path.write_text(f"sources:\n  {SOURCE}: {{token: {TOKEN}, tenants: [acme-telecom]}}\n")
    return path


def _event(session: str, number: int, at: datetime, event_type: str, **fields) -> dict:
    return {
        "event_id": f"{session}-e{number}",
        "event_type": event_type,
        "occurred_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tenant_id": "acme-telecom",
        "session_id": session,
        **fields,
    }


def _session(session: str, start: datetime, *, ended: bool) -> list[dict]:
    started = {"scenario": "customer_service", "channel": "pstn", "pipeline": "cascade"}
    asr = {"provider": "aliyun", "model": "paraformer-realtime-v2", "audio_seconds": "60"}
    events = [
        _event(session, 1, start, "session.started", **started),
        _event(session, 2, start + timedelta(seconds=30), "asr.usage", **asr),
    ]
    if ended:
        events.append(
            _event(
                session, 3, start + timedelta(seconds=60), "session.ended", end_reason="user_hangup"
            )
        )
    return events


def _post(up: LedgerUp, events: list[dict]) -> dict:
    body = "".join(json.dumps(e) + "\n" for e in events).encode()
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-ndjson"}
    status, answer = up.post("collector", "/v1/events", body, headers)
    assert status == 202, answer
    return answer


def _published(settings: Settings, sql: str) -> list[tuple]:
    if not settings.published_path.exists():
        return []
    with open_published(settings) as con:
        return con.execute(sql).fetchall()


def _finished(up: LedgerUp, job: str) -> list:
    runs = up.runs(job)
    return runs if runs and all(r[0] in ("SUCCESS", "FAILURE", "CANCELED") for r in runs) else []


@pytest.mark.parametrize("storage", ["sqlite", "postgres"])
def test_ledger_up_runs_the_pipeline_and_its_schedules_unattended(
    storage: str, ops_settings: Settings, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    started = time.monotonic()
    zone = ZoneInfo(ops_settings.timezone)
    environment = {}
    if storage == "postgres":
        url = request.getfixturevalue("postgres_server").create_database("ledger_up")
        environment["LEDGER_DAGSTER_POSTGRES_URL"] = url
    # Both schedules fire once, on the first whole minute 80 seconds from now: after the landing
    # sensor queued the build (the instance runs one job at a time, in order).
    cron, fires_at = cron_at_next_minute(ops_settings.timezone, 80)
    if fires_at.isocalendar()[:2] != datetime.now(zone).isocalendar()[:2]:
        time.sleep((fires_at - datetime.now(zone)).total_seconds() + 1)  # past Monday 00:00
        cron, fires_at = cron_at_next_minute(ops_settings.timezone, 80)
    # A session a week ago (in the review's week; it leaves yesterday open) and one still open.
    week_ago = datetime.now(UTC).replace(microsecond=0) - timedelta(days=7)
    with WebhookReceiver() as receiver:
        settings = ops_settings.model_copy(
            update={"webhook_url": receiver.url, "alerts_cron": cron, "review_cron": cron}
        )
        up = LedgerUp(settings, environment, _collector_config(tmp_path))
        with up.started():
            first = _post(up, _session("up-s1", week_ago, ended=True))
            second = _post(up, _session("up-s2", week_ago + timedelta(minutes=5), ended=False))

            # The collector counts what it took, and the ASR/TTS pool's open session.
            collector = up.metrics("collector")
            assert collector['ledger_collector_events_accepted_total{source="gw-up"}'] == 5
            assert collector['ledger_collector_batches_accepted_total{source="gw-up"}'] == 2
            assert collector['ledger_collector_active_sessions{pool="asr_tts"}'] == 1
            assert collector['ledger_collector_active_sessions{pool="realtime"}'] == 0
            assert collector["ledger_collector_batch_seconds_count"] == 2

            # The landing sensor picked the batches up; the build published them.
            files = wait_for(
                lambda: (
                    _published(
                        settings,
                        "select path, accepted from marts.fct_ingested_files "
                        "where path like '%/collector/gw-up/%' order by path",
                    )
                    if len(
                        _published(
                            settings,
                            "select 1 from marts.fct_ingested_files "
                            "where path like '%/collector/gw-up/%'",
                        )
                    )
                    == 2
                    else None
                ),
                "the collector's batches in the published copy",
            )
            landing = settings.landing_dir
            assert files == [(str(landing / first["file"]), 3), (str(landing / second["file"]), 2)]
            assert _published(
                settings,
                "select session_id from marts.fct_session_ledger "
                "where session_id like 'up-%' order by session_id",
            )[0] == ("up-s1",)

            # Both schedules fired at their minute, after the build.
            alerts = wait_for(lambda: _finished(up, "daily_cost_alerts"), "the alerts run")
            review = wait_for(lambda: _finished(up, "weekly_margin_review"), "the review run")
            day = (fires_at.date() - timedelta(days=1)).isoformat()
            week = iso_week_of(fires_at.date() - timedelta(days=7))
            assert [(s, c) for s, c, _ in alerts] == [
                ("SUCCESS", {"ops": {"run_cost_alerts": {"config": {"business_date": day}}}})
            ]
            assert alerts[0][2]["dagster/schedule_name"] == "daily_cost_alerts_schedule"
            assert [(s, c) for s, c, _ in review] == [
                ("SUCCESS", {"ops": {"write_margin_review": {"config": {"iso_week": week}}}})
            ]
            # No event after yesterday yet: one "data is stale" notification, to the webhook.
            assert [b["text"].split(":")[0] for b in receiver.bodies] == [
                f"[DATA STALE] cost alerts held for {day}"
            ]
            folder = settings.reports_dir / week
            assert sorted(p.name for p in folder.iterdir()) == [
                f"margin-review-{week}.{ext}" for ext in ("html", "md", "xlsx")
            ]
            assert "acme-telecom" in (folder / f"margin-review-{week}.md").read_text()

            # The pipeline's metrics, read from the published copy and the run storage.
            pipeline = up.metrics("pipeline")
            ((published_at, events),) = _published(
                settings, "select published_at, events from publication"
            )
            accepted = datetime.strptime(
                second["file"].split("/")[-1].split("Z-")[0], "%Y%m%dT%H%M%S%f"
            )
            lag = (
                published_at.replace(tzinfo=UTC).timestamp()
                - accepted.replace(tzinfo=UTC).timestamp()
            )
            assert pipeline['ledger_pipeline_data_lag_seconds{source="gw-up"}'] == pytest.approx(
                lag, abs=0.002
            )
            assert pipeline["ledger_pipeline_published_events"] == events
            assert (
                pipeline["ledger_pipeline_last_publish_timestamp_seconds"]
                == published_at.replace(tzinfo=UTC).timestamp()
            )
            assert pipeline['ledger_pipeline_scrape_errors{part="runs"}'] == 0
            assert pipeline["ledger_pipeline_last_build_duration_seconds"] > 0
            _, health = up.get("pipeline", "/healthz")
            assert {name: s["running"] for name, s in json.loads(health)["services"].items()} == {
                "daemon": True,
                "webserver": True,
                "collector": True,
                "boards": True,
            }
            for service, path in (
                ("collector", "/healthz"),
                ("boards", "/_stcore/health"),
                ("dagster", "/server_info"),
            ):
                assert up.get(service, path)[0] == 200

            children = up.descendants()
            code, output = up.stop()
    # SIGTERM stops every child and their own children, then `ledger up` itself.
    assert code == 0
    assert output.splitlines()[-1] == "stopped"
    _gone, alive = psutil.wait_procs(children, timeout=10)
    assert alive == []
    for name in ("daemon", "webserver", "collector", "boards"):
        assert (settings.logs_dir / f"{name}.log").stat().st_size > 0
    instance = (settings.dagster_home / "dagster.yaml").read_text()
    if storage == "postgres":
        # The instance file names the variable; the URL never reaches a file of the home.
        assert "env: LEDGER_DAGSTER_POSTGRES_URL" in instance
        for path in settings.home.rglob("*.yaml"):
            assert url not in path.read_text()
    else:
        assert "postgres" not in instance.split("\n", 1)[1].split("LEDGER_DAGSTER_POSTGRES_URL")[0]
    print(f"ledger up test ({storage}): {time.monotonic() - started:.0f}s")


def test_ledger_up_refuses_a_taken_port_in_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            main,
            [
                "up",
                f"--boards-port={port}",
                f"--dagster-port={free_port()}",
                f"--pipeline-port={free_port()}",
            ],
            env={"LEDGER_HOME": str(tmp_path / "home")},
        )
    assert result.exit_code == 1
    assert result.output == (
        f"Error: port {port} on 127.0.0.1 (the boards) is taken by another program: stop it or "
        f"choose another port with `ledger up --boards-port N`\n"
    )
    assert not (tmp_path / "home" / "dagster").exists()


def test_ledger_up_refuses_a_home_another_run_holds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from ledger.core.home_lock import home_lock\n"
         "with home_lock(Path(sys.argv[1]), command='ledger build'):\n"
         "    print('held', flush=True); time.sleep(60)", str(home)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline() == "held\n"
        result = CliRunner().invoke(main, ["up"], env={"LEDGER_HOME": str(home)})
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 1
    assert result.output.startswith(
        f"Error: another ledger run holds {home}: pid {holder.pid} (`ledger build`), since "
    )
    assert result.output.count("\n") == 1


def test_the_instance_file_follows_the_settings_until_its_marker_line_is_deleted(
    tmp_path: Path,
) -> None:
    from ledger.commands.instance import instance_text, prepare_instance

    settings = Settings(home=tmp_path / "home")
    prepare_instance(settings)
    instance = settings.dagster_home / "dagster.yaml"
    shipped = (REPO_ROOT / "dagster_project" / "instance" / "dagster.yaml").read_text()
    assert instance.read_text() == (
        "# Written by `ledger up` from dagster_project/instance/dagster.yaml: delete this line "
        "to keep edits.\n" + shipped
    )
    # The storage exists before any service opens it (two creating it at once break it).
    assert (settings.dagster_home / "history" / "runs.db").exists()

    secret = "postgresql://dagster:pa55word@db.internal:5432/ledger"
    text = instance_text(settings.model_copy(update={"dagster_postgres_url": secret}))
    assert "postgres_url:\n      env: LEDGER_DAGSTER_POSTGRES_URL\n" in text
    assert "pa55word" not in text

    instance.write_text("telemetry:\n  enabled: true\n")
    prepare_instance(settings)
    assert instance.read_text() == "telemetry:\n  enabled: true\n"


def test_the_postgres_url_names_psycopg2_and_a_bad_one_is_never_repeated() -> None:
    url = "postgresql://dagster:pa55word@db.internal:5432/ledger"
    settings = Settings.from_env({"LEDGER_DAGSTER_POSTGRES_URL": url})
    # SQLAlchemy would read a bare postgresql:// as psycopg 3; dagster-postgres brings psycopg2.
    assert (
        settings.dagster_postgres_url
        == "postgresql+psycopg2://dagster:pa55word@db.internal:5432/ledger"
    )
    assert "pa55word" not in settings.as_json()
    with pytest.raises(ValueError, match="must be a URL such as") as refused:
        Settings.from_env({"LEDGER_DAGSTER_POSTGRES_URL": "mysql://dagster:pa55word@db/x"})
    assert "pa55word" not in str(refused.value)
