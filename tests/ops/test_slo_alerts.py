"""SPEC 13 end to end: simulated traffic (the simulator at its smallest scale) with an endpointing
regression injected for one tenant; the build's own last step evaluates the burn rates and pages
the audio team's receiver, and only it (real HTTP servers on 127.0.0.1, routed by
LEDGER_OWNER_WEBHOOKS). The next refresh holds the same page back (cooldown).

The simulated day: acme-telecom's newest session (5 turns, 2026-11-02 10:31-10:32 UTC) is the
newest traffic of the warehouse; its endpointing is made 1.5 s slow (budget 250 ms), so every turn
of the last hour and of the last 5 minutes is bad: burn rate 20 > 14.4 on both windows.

The build runs the two page rules only (LEDGER_BURN_RATE_RULES, so the configured rules reach dbt
too): the simulated LLM tail is a real slow burn of its own (5 of acme-telecom's 77 turns over the
300 ms budget, burn rate 1.3), which the default 3-day ticket rule would rightly send to the
inference team; a page is what the regression must cause.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from ledger.alerts.budgets import run_budget_alerts
from ledger.core.settings import Settings
from ledger.simulate import simulate
from tests.support.homes import build_home
from tests.support.receivers import receivers

pytestmark = pytest.mark.integration

REGRESSION_TENANT = "acme-telecom"
REGRESSION_FROM = datetime.fromisoformat("2026-11-02T10:00:00+00:00")


def _landing_with_regression(landing: Path) -> None:
    simulate(
        landing,
        tenants=2,
        days=1,
        start=date(2026, 11, 2),
        sessions_per_day=4,
        bad_row_share=0,
        duplicate_share=0,
    )
    for path in sorted(landing.rglob("*.jsonl")):
        lines = []
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if (
                event["event_type"] == "turn.latency"
                and event["segment"] == "endpointing"
                and event["tenant_id"] == REGRESSION_TENANT
                and datetime.fromisoformat(event["started_at"]) >= REGRESSION_FROM
            ):
                started = datetime.fromisoformat(event["started_at"])
                event["ended_at"] = (started + timedelta(milliseconds=1500)).isoformat()
                line = json.dumps(event)
            lines.append(line)
        path.write_text("\n".join(lines) + "\n")


def test_an_endpointing_regression_pages_the_audio_team_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with receivers("audio", "inference", "platform") as hooks:
        monkeypatch.setenv(
            "LEDGER_OWNER_WEBHOOKS", " ".join(f"{team}={hook.url}" for team, hook in hooks.items())
        )
        settings = build_home(
            tmp_path,
            landing_files=_landing_with_regression,
            settings_fields={"burn_rate_rules": "page:14.4:1h:5m page:6:6h:30m"},
        )

        assert [len(hooks[team].messages) for team in ("audio", "inference", "platform")] == [
            1,
            0,
            0,
        ]
        page = hooks["audio"].messages[0]
        assert page["text"] == (
            "[PAGE] acme-telecom endpointing latency SLO burning 20.0x its error budget "
            "(conversational profile): http://127.0.0.1:8501/slo?profile=conversational"
            "&segment=endpointing&tenant=acme-telecom"
        )
        assert page["blocks"][1]["text"]["text"].startswith(
            "Burn rate 20.0x over 1h and 20.0x over 5m (rule page_1h_5m: both above 14.4x)."
        )

        with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
            alerts = con.execute(
                "select tenant_id, segment, owner, rule_name, severity, notification, destination "
                "from ops.slo_alerts order by segment"
            ).fetchall()
            deliveries = con.execute(
                "select kind, tenant_id, severity, status, attempts from ops.deliveries "
                "order by severity"
            ).fetchall()
        audio_host = f"webhook at 127.0.0.1:{hooks['audio'].port}"
        # First audio (the five segments' sum) broke too; no single team owns it, so its page
        # goes to the default destination (no LEDGER_WEBHOOK_URL: the notifications file).
        assert alerts == [
            ("acme-telecom", "endpointing", "audio", "page_1h_5m", "page", "sent", audio_host),
            ("acme-telecom", "first_audio", None, "page_1h_5m", "page", "sent", "file"),
        ]
        assert deliveries == [
            ("slo_burn", "acme-telecom", "critical", "sent", 1),
            ("slo_burn", "acme-telecom", "critical", "sent", 1),
        ]

        # The next refresh sees the same burn: held by the cooldown, nothing sent again.
        lines = run_budget_alerts(
            Settings.from_env({**settings.as_environment(), "LEDGER_OWNER_WEBHOOKS": ""}),
            echo=None,
        )
        assert lines[0] == (
            "latency SLOs: 2 burning (2 paging), 0 notifications sent, 2 held by the cooldown"
        )
        assert [len(hook.messages) for hook in hooks.values()] == [1, 0, 0]
