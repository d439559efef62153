"""SPEC 13 end to end: simulated traffic (the simulator at its smallest scale: 2 tenants, 2 days,
4 sessions a day) with an endpointing regression injected for one tenant; the build's own last
step evaluates the burn rates and pages the audio team's receiver, and only it (real HTTP servers
on 127.0.0.1, routed by LEDGER_OWNER_WEBHOOKS). The next refresh holds the same page back
(cooldown). The same step sends a spend budget alert to the default webhook (finance's).

bright-bank's newest session (5 turns, 2026-11-02 09:04-09:05 UTC) is the newest traffic of the
warehouse; its endpointing is made 1.5 s slow (budget 250 ms), so every turn of the last hour and
of the last 5 minutes is bad: burn rate 20 > 14.4 on both windows.

The build runs the two page rules only (LEDGER_BURN_RATE_RULES, so the configured rules reach dbt
too): at this scale a tenant's natural latency tail over the default 3-day ticket rule's windows
is a real slow burn, which would rightly ticket its owner; a page is what the regression must
cause.
"""

from __future__ import annotations

import json
import shutil
from datetime import date, datetime, timedelta
from decimal import Decimal as D
from pathlib import Path

import duckdb
import pytest

from ledger.alerts.budgets import run_budget_alerts
from ledger.core.settings import REPO_ROOT, Settings
from ledger.simulate import simulate
from tests.support.homes import build_home
from tests.support.receivers import receivers

pytestmark = pytest.mark.integration

REGRESSION_TENANT = "bright-bank"
REGRESSION_FROM = datetime.fromisoformat("2026-11-02T08:30:00+00:00")
# A budget acme-telecom's first day already overspends.
SPEND_BUDGETS = "tenant_id,month,amount,currency,provider\nacme-telecom,2026-11,1,CNY,\n"


def _landing_with_regression(landing: Path) -> None:
    simulate(
        landing,
        tenants=2,
        days=2,
        start=date(2026, 11, 1),
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
    reference = tmp_path / "reference"
    shutil.copytree(REPO_ROOT / "data" / "reference", reference)
    (reference / "spend_budgets.csv").write_text(SPEND_BUDGETS)
    with receivers("audio", "inference", "platform", "finance") as hooks:
        monkeypatch.setenv(
            "LEDGER_OWNER_WEBHOOKS",
            " ".join(f"{team}={hooks[team].url}" for team in ("audio", "inference", "platform")),
        )
        monkeypatch.setenv("LEDGER_WEBHOOK_URL", hooks["finance"].url)
        settings = build_home(
            tmp_path,
            reference_dir=reference,
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
            "[PAGE] bright-bank endpointing latency SLO burning 20.0x its error budget "
            "(conversational profile): http://127.0.0.1:8501/slo?profile=conversational"
            "&segment=endpointing&tenant=bright-bank"
        )
        assert page["blocks"][1]["text"]["text"].startswith(
            "Burn rate 20.0x over 1h and 20.0x over 5m (rule page_1h_5m: both above 14.4x)."
        )
        # First audio (the five segments' sum) broke too; no single team owns it, so its page
        # goes to the default webhook, with the spend budget alert.
        assert sorted(message["text"] for message in hooks["finance"].messages) == [
            "[BUDGET 100%] acme-telecom 2026-11: forecast to spend 2922.9% of the budget: "
            "http://127.0.0.1:8501/budgets?month=2026-11&tenant=acme-telecom",
            "[BUDGET 80%] acme-telecom 2026-11: spent 97.4% of the budget: "
            "http://127.0.0.1:8501/budgets?month=2026-11&tenant=acme-telecom",
            "[PAGE] bright-bank first audio latency SLO burning 20.0x its error budget "
            "(conversational profile): http://127.0.0.1:8501/slo?profile=conversational"
            "&segment=first_audio&tenant=bright-bank",
        ]

        with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
            alerts = con.execute(
                "select tenant_id, segment, owner, rule_name, severity, notification, destination "
                "from ops.slo_alerts order by segment"
            ).fetchall()
            deliveries = con.execute(
                "select kind, tenant_id, severity, status, attempts from ops.deliveries "
                "order by kind, severity"
            ).fetchall()
            spend = con.execute(
                "select tenant_id, basis, threshold_pct, budget_amount, month_to_date, forecast, "
                "forecast_low, forecast_high, as_of, notification from ops.spend_budget_alerts "
                "order by basis"
            ).fetchall()
        audio_host = f"webhook at 127.0.0.1:{hooks['audio'].port}"
        finance_host = f"webhook at 127.0.0.1:{hooks['finance'].port}"
        assert alerts == [
            ("bright-bank", "endpointing", "audio", "page_1h_5m", "page", "sent", audio_host),
            ("bright-bank", "first_audio", None, "page_1h_5m", "page", "sent", finance_host),
        ]
        assert deliveries == [
            ("slo_burn", "bright-bank", "critical", "sent", 1),
            ("slo_burn", "bright-bank", "critical", "sent", 1),
            ("spend_budget", "acme-telecom", "warning", "sent", 1),
            ("spend_budget", "acme-telecom", "warning", "sent", 1),
        ]
        # The newest closed day is Sunday 2026-11-01 (acme-telecom spent 0.97431356): with one
        # day seen, every day left takes its spend: 30 x 0.97431356, interval and all.
        forecast = D("29.229406800000")
        assert spend == [
            ("acme-telecom", "actual", 80, D(1), D("0.97431356"), forecast, forecast, forecast,
             date(2026, 11, 1), "sent"),
            ("acme-telecom", "forecast", 100, D(1), D("0.97431356"), forecast, forecast, forecast,
             date(2026, 11, 1), "sent"),
        ]  # fmt: skip

        # The next refresh sees the same burn: held by the cooldown, nothing sent again.
        lines = run_budget_alerts(
            Settings.from_env({**settings.as_environment(), "LEDGER_OWNER_WEBHOOKS": ""}),
            echo=None,
        )
        assert lines == [
            "latency SLOs: 2 burning (2 paging), 0 notifications sent, 2 held by the cooldown",
            "spend budgets: 2 at 80% or more (actual or forecast), 0 notifications sent, 2 held "
            "by the cooldown",
        ]
        assert [len(hook.messages) for hook in hooks.values()] == [1, 0, 0, 3]
