"""The Operations board page (SPEC 11): shadow verdicts and pool capacity, read from the
published copy. Capacity on the boards fixture (worked out by hand in
tests/planning/test_capacity.py), shadow verdicts on the planning week (the simulator's candidate,
tests/planning/test_shadow.py)."""

from __future__ import annotations

import base64
import json
from datetime import date

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from ledger.core.settings import REPO_ROOT, Settings

pytestmark = pytest.mark.integration

APP = REPO_ROOT / "dashboards" / "app.py"


def open_operations(settings: Settings, monkeypatch, period: tuple[date, date]) -> AppTest:
    monkeypatch.setenv("LEDGER_HOME", str(settings.home))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(settings.reference_dir))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.date_input(key="filter_dates").set_value(period).run()
    at.switch_page("app_pages/operations.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def records(frame: pd.DataFrame, columns: list[str]) -> list[tuple]:
    return [
        tuple(None if pd.isna(v) else v for v in row)
        for row in frame[columns].itertuples(index=False)
    ]


def table(at: AppTest, column: str) -> pd.DataFrame:
    """The one shown table that has `column`."""
    [found] = [d.value for d in at.dataframe if column in d.value.columns]
    return found


def chart_traces(at: AppTest, y_title: str) -> dict[str, list]:
    """Trace name -> its y values, of the one chart whose y axis is titled `y_title`."""
    [figure] = [
        spec
        for spec in (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
        if spec["layout"]["yaxis"]["title"]["text"] == y_title
    ]
    return {trace["name"]: _values(trace["y"]) for trace in figure["data"]}


def _values(encoded: list | dict) -> list:
    """Plotly ships numeric arrays as base64 with their dtype."""
    if isinstance(encoded, dict):
        return np.frombuffer(base64.b64decode(encoded["bdata"]), encoded["dtype"]).tolist()
    return list(encoded)


def test_the_capacity_section_shows_each_pools_metric(boards_home, monkeypatch) -> None:
    at = open_operations(boards_home, monkeypatch, (date(2025, 3, 10), date(2025, 3, 11)))
    # The ledger holds 2025-03-09 to 11: W11 is partial and says so (issue 27 point 8).
    W11 = "2025-W11 (Mar 10–Mar 16) · partial, 2 of 7 days"
    columns = [
        "Week",
        "Pool load of",
        "LLM tokens/s, peak minute",
        "LLM tokens/s, P95 of hourly peaks",
        "Encoder images/s, peak minute",
        "Concurrent paths, peak",
        "Concurrent sessions (all pipelines), peak",
        "Concurrent realtime sessions, peak",
        "Vision cache hit rate (%)",
        "Vision cache size (GiB)",
        "Encoder images/s saved per 10 points of hit rate",
    ]
    assert records(table(at, "Pool load of"), columns) == [
        (W11, "all tenants", 1833.583333, 1804.404166, 0.166667, None, None, None, 28.6,
         39.0625, 0.023333),
        # Every session of the fixture is a cascade session: one path each, no realtime session.
        (W11, "acme-telecom", 1833.583333, 1833.583333, 0.0, 1, 1, 0, None, None, 0.0),
        (W11, "kiddo-toys", 1250.0, 1250.0, 0.166667, 1, 1, 0, 28.6, 39.0625, 0.023333),
    ]  # fmt: skip
    assert any("No shadow comparisons" in c.value for c in at.caption)
    # Hour by hour (fct_capacity_pool_hourly): the week's peak minute is one of the hours' peaks.
    hourly = chart_traces(at, "LLM tokens/s, peak minute of the hour")
    assert list(hourly) == ["all tenants"]
    assert max(v for v in hourly["all tenants"] if v == v) == 1833.583333
    # Hours without load are gaps (no value), not a line drawn across them (issue 27 point 8).
    assert any(v != v for v in hourly["all tenants"])

    at.multiselect(key="filter_tenants").set_value(["kiddo-toys"]).run()
    assert [row[1] for row in records(table(at, "Pool load of"), columns)] == ["kiddo-toys"]
    hourly = chart_traces(at, "LLM tokens/s, peak minute of the hour")
    assert list(hourly) == ["kiddo-toys"]
    assert max(v for v in hourly["kiddo-toys"] if v == v) == 1250.0


def test_the_shadow_section_says_switch_dont_and_not_enough_turns(
    planning_home, monkeypatch
) -> None:
    at = open_operations(planning_home, monkeypatch, (date(2026, 11, 2), date(2026, 11, 8)))
    W45 = "2026-W45 (Nov 02–Nov 08)"  # a whole week of the planning ledger
    columns = [
        "Week",
        "Tenant",
        "Scenario",
        "Candidate",
        "Verdict",
        "Compared turns",
        "Waste avoided (CNY)",
        "Waste added (CNY)",
    ]
    assert records(table(at, "Verdict"), columns) == [
        (W45, "acme-telecom", "customer_service", "eou-v2", "switch", 621, 0.04, 0.0),
        (W45, "bright-bank", "customer_service", "eou-v2", "don't", 277, 0.0, 0.46),
        (W45, "bright-bank", "outbound", "eou-v2", "not enough turns yet", 57, 0.0, 0.08),
    ]
    text = " ".join(m.value for m in at.markdown)
    assert "the **exact sign test** (for false interruptions, McNemar's exact test)" in text
    assert "fewer than 200 compared turns" in text
    # Day by day (fct_shadow_comparison_daily): one line per tenant, scenario and candidate.
    daily = chart_traces(at, "Endpointing change, median (ms)")
    assert sorted(daily) == [
        "acme-telecom / customer_service / eou-v2",
        "bright-bank / customer_service / eou-v2",
        "bright-bank / outbound / eou-v2",
    ]
    assert all(value < 0 for values in daily.values() for value in values)
