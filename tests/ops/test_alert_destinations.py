"""Alert destinations fail one at a time (issue 39): an owner team's webhook URL that cannot be
used is named (variable and entry) and its alerts are kept for it, while every other team is
paged; what is not delivered is printed by the build's alert step, counted in `/metrics` and
reflected in `ledger up`'s `/healthz`.

Three latency SLOs burn at once in a hand-made published copy (the build's marts are not needed
to route), each owned by another team; the teams' receivers are real HTTP servers on 127.0.0.1.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb

from ledger.alerts.budgets import run_budget_alerts
from ledger.commands.pipeline_metrics import metrics_text
from ledger.commands.up import pipeline_health
from ledger.core.settings import Settings
from tests.support.receivers import receivers

# (segment, owner): one burning SLO per owner team.
BURNING = [("endpointing", "audio"), ("llm_ttft", "inference"), ("tts_first_frame", "platform")]
MALFORMED = "ftp://hooks.example.com/services/s3cretPath"
UNUSABLE = (
    "LEDGER_OWNER_WEBHOOKS entry 'platform' must be an http:// or https:// URL (it has scheme "
    "'ftp'; the URL is not shown, it holds the webhook's secret)"
)


def _published_with_burning_slos(settings: Settings) -> None:
    settings.published_path.parent.mkdir(parents=True)
    with duckdb.connect(str(settings.published_path)) as con:
        con.execute("create schema marts")
        con.execute(
            """
            create table marts.fct_latency_burn_rates as
            select 'conversational' as profile, 'bright-bank' as tenant_id, segment, owner,
                0.99::decimal(5, 4) as objective, 'page_1h_5m' as rule_name, 'page' as severity,
                14.4 as factor, 3600 as long_window_seconds, 300 as short_window_seconds,
                20.0 as long_burn_rate, 20.0 as short_burn_rate,
                timestamp '2026-11-02 09:05:00' as evaluated_at, true as is_firing,
                1 as rule_order, segment_order
            from (values ('endpointing', 'audio', 1), ('llm_ttft', 'inference', 3),
                         ('tts_first_frame', 'platform', 4)) as s(segment, owner, segment_order)
            """
        )
        con.execute(
            "create table marts.fct_latency_slo as select profile, tenant_id, segment, "
            "null::double as sli, null::double as error_budget_remaining "
            "from marts.fct_latency_burn_rates"
        )


def _page(segment: str, label: str) -> str:
    return (
        f"[PAGE] bright-bank {label} latency SLO burning 20.0x its error budget (conversational "
        f"profile): http://127.0.0.1:8501/slo?profile=conversational&segment={segment}"
        "&tenant=bright-bank"
    )


def _undelivered_metric(settings: Settings) -> list[str]:
    body, _ = metrics_text(settings)
    return [
        line
        for line in body.decode().splitlines()
        if line.startswith(
            ("ledger_pipeline_undelivered", 'ledger_pipeline_scrape_errors{part="alerts"}')
        )
    ]


def test_one_malformed_owner_url_keeps_its_alerts_and_every_other_team_is_paged(
    tmp_path: Path,
) -> None:
    with receivers("audio", "inference", "platform") as hooks:
        owners = f"audio={hooks['audio'].url} inference={hooks['inference'].url}"
        environment = {"LEDGER_HOME": str(tmp_path / "home")}
        settings = Settings.from_env(
            {**environment, "LEDGER_OWNER_WEBHOOKS": f"{owners} platform={MALFORMED}"}
        )
        _published_with_burning_slos(settings)

        lines = run_budget_alerts(settings, now=datetime(2026, 11, 2, 9, 10), echo=None)

        assert [message["text"] for message in hooks["audio"].messages] == [
            _page("endpointing", "endpointing")
        ]
        assert [message["text"] for message in hooks["inference"].messages] == [
            _page("llm_ttft", "LLM time to first token")
        ]
        assert lines == [
            UNUSABLE,
            "latency SLOs: 3 burning (3 paging), 2 notifications sent, 0 held by the cooldown",
            "1 SLO notifications failed: retried on the next run",
            "not delivered yet: slo_burn critical for bright-bank on 2026-11-02 after 0 attempts "
            f"({UNUSABLE}; the notification is kept and sent once it is fixed)",
        ]
        assert "s3cretPath" not in "\n".join(lines)
        with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
            assert con.execute(
                "select owner, notification, destination from ops.slo_alerts order by owner"
            ).fetchall() == [
                ("audio", "sent", f"webhook at 127.0.0.1:{hooks['audio'].port}"),
                ("inference", "sent", f"webhook at 127.0.0.1:{hooks['inference'].port}"),
                ("platform", "failed", "unusable webhook (not sent)"),
            ]
        assert _undelivered_metric(settings) == [
            'ledger_pipeline_undelivered_notifications{kind="slo_burn"} 1.0',
            'ledger_pipeline_scrape_errors{part="alerts"} 0.0',
        ]
        assert pipeline_health(settings)["undelivered_notifications"] == {"slo_burn": 1}

        # The URL fixed, the next run delivers the page it kept; the others are not sent twice.
        fixed = Settings.from_env(
            {**environment, "LEDGER_OWNER_WEBHOOKS": f"{owners} platform={hooks['platform'].url}"}
        )
        lines = run_budget_alerts(fixed, now=datetime(2026, 11, 2, 9, 15), echo=None)

        assert lines == [
            "latency SLOs: 3 burning (3 paging), 0 notifications sent, 3 held by the cooldown",
            "1 earlier failed SLO notifications delivered",
        ]
        assert [message["text"] for message in hooks["platform"].messages] == [
            _page("tts_first_frame", "TTS first frame")
        ]
        assert [len(hooks[team].messages) for team in ("audio", "inference")] == [1, 1]
        assert _undelivered_metric(fixed) == [
            'ledger_pipeline_undelivered_notifications{kind="slo_burn"} 0.0',
            'ledger_pipeline_scrape_errors{part="alerts"} 0.0',
        ]
        assert pipeline_health(fixed)["undelivered_notifications"] == {"slo_burn": 0}
