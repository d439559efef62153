"""Device clocks and the latency SLOs (issue 38, points 4 and 5).

One home (`clocks_home`), ingested as of 2026-11-20 12:00 UTC, llm_ttft only (budget 300 ms, owner
inference; a good turn takes 200 ms, a bad one 500 ms), one turn a minute:

| tenant  | objective | turns                                                     | newest turn |
|---------|-----------|-----------------------------------------------------------|-------------|
| steady  | 0.95      | 94 good on 11-19 from 08:00; 6 bad on 11-20 09:54-09:59    | 09:59       |
| loose   | 0.90      | 60 on 11-20 08:00-08:59, the last 3 bad                    | 08:59       |
| later   | 0.95      | 40 good on 11-20 11:20-11:59                               | 11:59       |
| ahead   | 0.95      | 1 good at 12:03:30 (its clock ahead of the ingest)          | 12:03:30    |
| skewed  | 0.95      | 2 turns whose segment times are a day late or in 2099      | quarantined |

Each tenant is evaluated at its own newest turn, never later than the ingest (ahead: 12:00): the
steady burst pages although other tenants' traffic (and a skewed device) is newer. The skewed
device's turns are quarantined as `clock_skew`.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
import yaml

from ledger.core.settings import REPO_ROOT, Settings
from tests.support.homes import build_home

pytestmark = pytest.mark.integration

INGEST_TIME = datetime(2026, 11, 20, 12, 0)
GOOD_MS, BAD_MS = 200, 500


def _z(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds") + "Z"


class Traffic:
    def __init__(self, source: str) -> None:
        self.source = source
        self.events: list[dict] = []

    def _add(self, tenant: str, session: str, event_type: str, at: datetime, **fields) -> None:
        self.events.append(
            {
                "event_id": f"{session}-{len(self.events)}",
                "source": self.source,
                "event_type": event_type,
                "occurred_at": _z(at),
                "tenant_id": tenant,
                "session_id": session,
                **fields,
            }
        )

    def session(self, tenant: str, start: datetime, turns: list[int]) -> None:
        """A customer_service session with one llm_ttft turn a minute, of the given durations."""
        session = f"{tenant}-{start:%m%d%H%M}"
        self._add(
            tenant, session, "session.started", start, scenario="customer_service",
            channel="sip", pipeline="cascade",
        )  # fmt: skip
        for index, duration in enumerate(turns):
            begin = start + timedelta(minutes=index)
            end = begin + timedelta(milliseconds=duration)
            self._add(
                tenant, session, "turn.latency", end, turn_index=index, segment="llm_ttft",
                started_at=_z(begin), ended_at=_z(end),
            )  # fmt: skip
        self._add(
            tenant, session, "session.ended", start + timedelta(minutes=len(turns)),
            end_reason="user_hangup",
        )  # fmt: skip

    def write(self, path: Path) -> None:
        path.write_text("".join(json.dumps(e) + "\n" for e in self.events))


def _skewed_device() -> Traffic:
    """Two turns of a device whose clock is wrong: segment times a day after occurred_at, and an
    end in 2099 (lines 2 and 3 of skewed.jsonl)."""
    device = Traffic("device-7")
    at = datetime(2026, 11, 20, 11, 0, 10)
    device._add("skewed", "skewed-1", "session.started", at, scenario="customer_service",
                channel="device", pipeline="cascade")  # fmt: skip
    device._add(
        "skewed", "skewed-1", "turn.latency", at, turn_index=0, segment="llm_ttft",
        started_at=_z(at + timedelta(days=1)),
        ended_at=_z(at + timedelta(days=1, milliseconds=200)),
    )  # fmt: skip
    device._add(
        "skewed", "skewed-1", "turn.latency", at, turn_index=1, segment="llm_ttft",
        started_at=_z(at - timedelta(milliseconds=200)), ended_at="2099-11-20T11:00:10.000Z",
    )  # fmt: skip
    return device


def _write_landing(landing: Path) -> None:
    landing.mkdir(parents=True, exist_ok=True)
    traffic = Traffic("gw-1")
    traffic.session("steady", datetime(2026, 11, 19, 8, 0), [GOOD_MS] * 94)
    traffic.session("steady", datetime(2026, 11, 20, 9, 54), [BAD_MS] * 6)
    traffic.session("loose", datetime(2026, 11, 20, 8, 0), [GOOD_MS] * 57 + [BAD_MS] * 3)
    traffic.session("later", datetime(2026, 11, 20, 11, 20), [GOOD_MS] * 40)
    traffic.session("ahead", datetime(2026, 11, 20, 12, 3, 30), [GOOD_MS])
    traffic.write(landing / "traffic.jsonl")
    _skewed_device().write(landing / "skewed.jsonl")


@pytest.fixture(scope="module")
def clocks_home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("clocks")
    reference = root / "reference"
    shutil.copytree(REPO_ROOT / "data" / "reference", reference)
    budgets = yaml.safe_load((reference / "latency_budgets.yaml").read_text())
    budgets["tenants"]["loose"] = {"objective": 0.90}
    (reference / "latency_budgets.yaml").write_text(yaml.safe_dump(budgets))
    return build_home(
        root, reference_dir=reference, landing_files=_write_landing, ingest_time=INGEST_TIME
    )


def _published(settings: Settings, sql: str) -> list[tuple]:
    with duckdb.connect(str(settings.published_path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_a_skewed_device_clock_is_quarantined_with_its_reason(clocks_home):
    rows = _published(
        clocks_home,
        "select reason, field, line, event_type from marts.fct_quarantined_rows "
        "where file like '%skewed.jsonl' order by line",
    )
    assert rows == [
        ("clock_skew", "started_at", 2, "turn.latency"),
        ("clock_skew", "ended_at", 3, "turn.latency"),
    ]


def test_each_tenant_is_evaluated_at_its_own_newest_turn_never_after_the_ingest(clocks_home):
    rows = _published(
        clocks_home,
        "select tenant_id, evaluated_at, turns, bad_turns, objective, error_budget_turns "
        "from marts.fct_latency_slo where segment = 'llm_ttft' order by tenant_id",
    )
    assert rows == [
        ("ahead", INGEST_TIME, 1, 0, Decimal("0.9500"), Decimal("0.0500")),
        ("later", datetime(2026, 11, 20, 11, 59), 40, 0, Decimal("0.9500"), Decimal("2.0000")),
        ("loose", datetime(2026, 11, 20, 8, 59), 60, 3, Decimal("0.9000"), Decimal("6.0000")),
        ("steady", datetime(2026, 11, 20, 9, 59), 100, 6, Decimal("0.9500"), Decimal("5.0000")),
    ]


def test_a_burst_pages_although_other_tenants_and_a_skewed_device_are_newer(clocks_home):
    firing = _published(
        clocks_home,
        "select tenant_id, rule_name, short_turns, short_bad_turns from "
        "marts.fct_latency_burn_rates where is_firing order by tenant_id, rule_name",
    )
    # 09:55-09:59 are the 5-minute window's turns (age < 300 s), all bad: burn 20 > 14.4.
    assert firing == [
        ("steady", "page_1h_5m", 5, 5),
        ("steady", "page_6h_30m", 6, 6),
        ("steady", "ticket_3d_6h", 6, 6),
    ]


def test_the_owner_team_budget_is_the_sum_of_its_tenants_budgets(clocks_home):
    # Each tenant against its own objective: 0.05 x 100 + 0.10 x 60 + 0.05 x 40 + 0.05 x 1 turns,
    # of which 9 are spent (the loosest objective, 0.10 x 201, would leave 1 - 9 / 20.1).
    (row,) = _published(
        clocks_home,
        "select owner, tenants, turns, bad_turns, objective, error_budget_turns, "
        "error_budget_remaining, tenants_missing_objective from marts.fct_latency_slo_owner "
        "where segment = 'llm_ttft'",
    )
    assert row == ("inference", 4, 201, 9, None, Decimal("13.0500"), 1 - 9 / 13.05, 1)
