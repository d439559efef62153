"""The Streamlit boards: one AppTest per page on a small warehouse whose numbers are worked out by
hand from the shipped rate card and price plans (the traffic and its arithmetic: `boards_home` in
tests/conftest.py), the empty-warehouse guide, the query rules, and reading the published copy
while `ledger build` replaces it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from datetime import date
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from ledger.settings import REPO_ROOT, Settings

APP = REPO_ROOT / "dashboards" / "app.py"
PAGES = ("overview", "margin", "experience", "combined", "sessions", "data_quality")
PERIOD = (date(2025, 3, 10), date(2025, 3, 11))


@pytest.fixture
def boards_env(boards_home: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("LEDGER_HOME", str(boards_home.home))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(boards_home.reference_dir))
    return boards_home


def open_page(page: str, period: tuple[date, date] = PERIOD) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.date_input(key="filter_dates").set_value(period).run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, tuple[str, str | None]]:
    return {m.label: (m.value, m.delta or None) for m in at.metric}


def frame(at: AppTest, first_header: str) -> pd.DataFrame:
    """The shown table whose first column is `first_header`."""
    found = [d.value for d in at.dataframe if list(d.value.columns)[0] == first_header]
    assert len(found) == 1, [list(d.value.columns) for d in at.dataframe]
    return found[0]


def records(table: pd.DataFrame, columns: list[str]) -> list[tuple]:
    return [
        tuple(None if pd.isna(v) else v for v in row)
        for row in table[columns].itertuples(index=False)
    ]


# ---- pages ---------------------------------------------------------------------------------------


def test_overview_shows_the_period_totals_and_the_change_against_the_previous_period(boards_env):
    at = open_page("overview")

    assert metrics(at) == {
        "Revenue": ("CNY 3.40", "+CNY 2.80 (+466.7%)"),
        # 0.8088 against 0.0144 the previous two days (2025-03-08 and 09).
        "Cost": ("CNY 0.81", "+CNY 0.79 (+5,516.7%)"),
        "Gross margin": ("CNY 2.59", "+CNY 2.01 (+342.5%)"),
        "Gross margin %": ("76.21%", "-21.4 pp"),
        # 0.8088 / (3 + 100/60) billable minutes = 0.1733; before 0.0144 / 1.
        "Cost per billable minute": ("CNY 0.17", "+CNY 0.16 (+1,103.6%)"),
        "Interruption waste": ("CNY 0.09", "+CNY 0.09"),
        "Cache savings": ("CNY 0.43", "+CNY 0.43"),
        "Sessions": ("2", "+1"),
    }
    captions = " ".join(c.value for c in at.caption)
    assert "Changes are against 2025-03-08 to 2025-03-09" in captions
    assert "Published copy of " in captions


def test_margin_board_splits_money_by_tenant_period_component_and_phase(boards_env):
    at = open_page("margin")

    tenants = frame(at, "Tenant")
    assert records(
        tenants,
        [
            "Tenant",
            "Revenue (CNY)",
            "ASR cost (CNY)",
            "LLM cost (CNY)",
            "TTS cost (CNY)",
            "Vision cost (CNY)",
            "Infra cost (CNY)",
            "Cost (CNY)",
            "Gross margin (CNY)",
            "Gross margin (%)",
            "Interruption waste (CNY)",
            "Cache savings (CNY)",
        ],
    ) == [
        ("acme-telecom", 1.80, 0.03, 0.38, 0.20, 0.00, 0.08, 0.68, 1.12, 62.01, 0.09, 0.40),
        # 0.125 -> 0.12 and 1.475 -> 1.48: half-even to the cent.
        ("kiddo-toys", 1.60, 0.00, 0.03, 0.00, 0.08, 0.02, 0.12, 1.48, 92.19, 0.00, 0.03),
    ]

    costs = frame(at, "Component")
    assert records(costs, ["Component", "Provider", "Model", "Cost (CNY)", "Unpriced lines"]) == [
        ("llm", "deepseek", "deepseek-chat", 0.38, 0),
        ("tts", "aliyun", "cosyvoice-v2", 0.20, 0),
        ("vision", "qwen", "qwen-vl-plus", 0.08, 0),
        ("infra", "telco", "pstn", 0.08, 0),
        ("llm", "qwen", "qwen-turbo", 0.03, 0),
        ("asr", "aliyun", "paraformer-realtime-v2", 0.03, 0),
        ("infra", "in-house", "gpu_path", 0.02, 0),
        ("llm", "acme-llm", "x", 0.00, 3),
    ]

    phases = frame(at, "Phase")
    assert records(phases, ["Phase", "Route", "LLM calls", "LLM cost (CNY)"]) == [
        ("substantive", "large", 1, 0.38),
        ("intake", "small", 1, 0.03),
        ("greeting", "small", 1, 0.00),
    ]
    assert metrics(at)["LLM prefix cache"] == ("CNY 0.30", None)
    assert metrics(at)["TTS phrase cache"] == ("CNY 0.10", None)
    assert metrics(at)["Vision cache"] == ("CNY 0.03", None)

    at.segmented_control(key="margin_grain").set_value("week").run()
    weeks = frame(at, "Period")
    assert records(weeks, ["Period", "Tenant", "Revenue (CNY)", "Gross margin (CNY)"]) == [
        ("2025-W11", "acme-telecom", 1.80, 1.12),
        ("2025-W11", "kiddo-toys", 1.60, 1.48),
    ]


def test_experience_board_draws_the_latency_budget_table_with_over_budget_lines(boards_env):
    at = open_page("experience")

    budget = at.table[0].value
    assert records(
        budget,
        [
            "Segment",
            "Budget (ms)",
            "Owner",
            "P50 (ms)",
            "P95 (ms)",
            "Over budget (%)",
            "P95 over budget",
            "Turns measured",
        ],
    ) == [
        # endpointing 200, 300, 100 against 250, 250, 150: P95 = 200 + 0.9 x 100.
        ("Endpointing", "150–250", "audio", 200.0, 290.0, 33.3, True, 3),
        ("STT finalisation", "80–150", "audio", 100.0, 118.0, 0.0, False, 3),
        ("LLM time to first token", "160–300", "inference", 250.0, 385.0, 66.7, True, 3),
        ("TTS first frame", "80–120", "audio", 100.0, 109.0, 0.0, False, 3),
        ("Network / playback", "30–60", "platform", 40.0, 49.0, 0.0, False, 3),
        ("First audio (total)", "500–1000", "all", 820.0, 847.0, 0.0, False, 3),
    ]
    assert metrics(at) == {
        "First audio P50": ("820.0 ms", None),
        "First audio P95": ("847.0 ms", None),
        "Turns over first-audio budget": ("0.0%", None),
        "Degraded sessions": ("50.0%", None),
        "Interruption rate": ("33.3%", None),
        "False interruption rate": ("100.0%", None),
        # 200k cached of 350k input tokens; 500 of 1500 TTS characters.
        "Prefix cache hit rate": ("57.1%", None),
        "TTS phrase cache hit rate": ("33.3%", None),
    }
    captions = " ".join(c.value for c in at.caption)
    assert "Worst segment at P95: **LLM time to first token** (owner: inference)" in captions
    assert "Vision embedding cache hit rate: 28.6%" in captions

    kinds = frame(at, "Kind")
    assert records(kinds, ["Kind", "Events", "Sessions", "Share of sessions (%)"])[0] == (
        "tts_filler",
        1,
        1,
        50.0,
    )
    peaks = frame(at, "Tenant")
    assert records(peaks, ["Tenant", "Peak concurrent sessions"]) == [
        ("acme-telecom", 1),
        ("kiddo-toys", 1),
    ]


def test_combined_view_puts_false_interruptions_and_cache_hits_next_to_margin(boards_env):
    at = open_page("combined")

    columns = [
        "Tenant",
        "Cost (CNY)",
        "Gross margin (CNY)",
        "Gross margin (%)",
        "False interruption rate (%)",
        "Prefix cache hit rate (%)",
        "First audio P95 (ms)",
    ]
    # Sorted by gross margin, highest first, by default.
    assert records(frame(at, "Tenant"), columns) == [
        ("kiddo-toys", 0.12, 1.48, 92.19, None, 0.0, 450.0),
        ("acme-telecom", 0.68, 1.12, 62.01, 100.0, 66.7, 848.5),
    ]

    at.selectbox(key="combined_sort").set_value("false_interruption_rate").run()
    assert [row[0] for row in records(frame(at, "Tenant"), columns)] == [
        "acme-telecom",
        "kiddo-toys",
    ]
    at.selectbox(key="combined_sort").set_value("total_cost").run()
    at.toggle(key="combined_descending").set_value(False).run()
    assert [row[0] for row in records(frame(at, "Tenant"), columns)] == [
        "kiddo-toys",
        "acme-telecom",
    ]


def test_session_explorer_finds_a_session_by_id_and_shows_its_lines_and_turns(boards_env):
    at = open_page("sessions")
    assert records(frame(at, "Session"), ["Session", "Tenant"]) == [
        ("kiddo-s1", "kiddo-toys"),
        ("acme-s1", "acme-telecom"),
    ]

    # By id, whatever the sidebar's period: acme-s0 is from the day before it.
    at.text_input(key="sessions_search").set_value("ACME-S").run()
    assert [row[0] for row in records(frame(at, "Session"), ["Session"])] == ["acme-s1", "acme-s0"]
    assert at.selectbox(key="sessions_selected").value == "acme-s1"
    assert metrics(at) == {
        "Revenue": ("CNY 1.80", None),
        "Cost": ("CNY 0.68", None),
        "Gross margin": ("CNY 1.12", None),
        "Interruption waste": ("CNY 0.09", None),
        "Cache savings": ("CNY 0.40", None),
    }
    turns = [d.value for d in at.dataframe if "endpointing (ms)" in d.value.columns][0]
    assert records(
        turns,
        ["Turn", "endpointing (ms)", "llm_ttft (ms)", "First audio (ms)", "Over budget"],
    ) == [(0, 200.0, 400.0, 850.0, "llm_ttft"), (1, 300.0, 250.0, 820.0, "endpointing")]

    lines = frame(at, "At (UTC)")
    # Each line rounded on its own; the session's cost above rounds the exact sum (0.6838).
    assert records(lines, ["Provider", "Meter", "Amount (CNY)"]) == [
        ("aliyun", "asr.audio_seconds", 0.03),
        ("deepseek", "llm.cached_input_tokens", 0.10),
        ("deepseek", "llm.input_tokens", 0.20),
        ("deepseek", "llm.output_tokens", 0.08),
        ("aliyun", "tts.characters", 0.20),
        ("acme-llm", "llm.cached_input_tokens", None),
        ("acme-llm", "llm.input_tokens", None),
        ("acme-llm", "llm.output_tokens", None),
        ("aliyun", "tts.characters", 0.00),
        ("telco", "infra.path_minutes", 0.08),
    ]
    assert lines["Unpriced because"].notna().sum() == 3

    interruptions = [d.value for d in at.dataframe if "Wasted tokens" in d.value.columns][0]
    assert records(interruptions, ["Turn", "False", "Wasted tokens", "Waste (CNY)"]) == [
        (0, True, 5000, 0.09)
    ]
    hits = [d.value for d in at.dataframe if "Saved (CNY)" in d.value.columns][0]
    assert records(hits, ["Turn", "Cache", "Saved (CNY)"]) == [(0, "llm", 0.30), (1, "tts", 0.10)]
    assert "No degradations." in [c.value for c in at.caption]

    at.selectbox(key="sessions_selected").set_value("acme-s0").run()
    assert metrics(at)["Revenue"] == ("CNY 0.60", None)


def test_data_quality_shows_quarantine_unpriced_usage_and_freshness(boards_env):
    at = open_page("data_quality")

    shown = metrics(at)
    assert shown["Newest event"] == ("2025-03-11 03:01 UTC", None)
    assert shown["Quarantined rows"] == ("2", None)
    assert shown["Unpriced usage lines"] == ("3", None)
    assert shown["Last build published"][0].endswith(" UTC")
    assert records(frame(at, "Reason"), ["Reason", "Rows"]) == [
        ("malformed_json", 1),
        ("unknown_field", 1),
    ]
    by_file = frame(at, "Source file")
    assert sorted(Path(p).name for p in by_file["Source file"]) == [
        "boards-bad-rows.jsonl",
        "boards-bad-rows.jsonl",
    ]
    unpriced = frame(at, "Component")
    assert records(unpriced, ["Component", "Provider", "Model", "Meter", "Lines"]) == [
        ("llm", "acme-llm", "x", "llm.cached_input_tokens", 1),
        ("llm", "acme-llm", "x", "llm.input_tokens", 1),
        ("llm", "acme-llm", "x", "llm.output_tokens", 1),
    ]


def test_sidebar_filters_apply_to_every_page(boards_env):
    at = open_page("overview")
    at.multiselect(key="filter_tenants").set_value(["kiddo-toys"]).run()
    assert metrics(at)["Revenue"][0] == "CNY 1.60"
    assert metrics(at)["Cost"][0] == "CNY 0.12"
    at.switch_page("app_pages/combined.py").run()
    assert [r[0] for r in records(frame(at, "Tenant"), ["Tenant"])] == ["kiddo-toys"]
    at.multiselect(key="filter_scenarios").set_value(["customer_service"]).run()
    assert any("No sessions in the selected period" in i.value for i in at.info)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_explains_how_to_load_data_on_an_empty_warehouse(page, tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path / "empty-home"))
    at = AppTest.from_file(str(APP), default_timeout=30).run()
    at.switch_page(f"app_pages/{page}.py").run()

    assert not at.exception
    assert "ledger build" in at.info[0].value
    assert "make demo" in at.info[0].value


# ---- query rules ---------------------------------------------------------------------------------


def test_filter_values_travel_as_parameters_never_as_sql_text(boards_env):
    from dashboards import connection
    from dashboards.filters import Filters
    from dashboards.queries.common import session_filter
    from dashboards.queries.overview import period_totals

    hostile = "acme-telecom' or '1'='1"
    filters = Filters(*PERIOD, (hostile,), (), ())
    where, params = session_filter(filters)
    assert hostile not in where
    assert [hostile] in params
    version = connection.current_version()
    totals = period_totals(version, filters)
    assert int(totals.at[0, "sessions"]) == 0


def test_column_choices_outside_the_allow_list_are_refused(boards_env):
    from dashboards import connection
    from dashboards.filters import Filters
    from dashboards.queries.combined import combined_by_tenant
    from dashboards.queries.margin import margin_by_period

    version = connection.current_version()
    filters = Filters(*PERIOD)
    with pytest.raises(ValueError, match="not one of"):
        combined_by_tenant(version, filters, "revenue; drop table x", True)
    with pytest.raises(ValueError, match="not one of"):
        margin_by_period(version, filters, "hour")


def test_money_is_rounded_half_even_to_the_cent_with_its_currency():
    from dashboards.formatting import money, money_delta

    assert money(Decimal("0.125"), "CNY") == "CNY 0.12"
    assert money(Decimal("0.135"), "CNY") == "CNY 0.14"
    assert money(Decimal("-1234.565"), "USD") == "USD -1,234.56"
    assert money(None, "CNY") == "—"
    assert money_delta(Decimal("0.9"), Decimal("0.9035"), "CNY") == "-CNY 0.00 (-0.4%)"


# ---- publication while building ------------------------------------------------------------------


def test_the_boards_keep_reading_while_the_pipeline_builds_and_pick_up_the_new_copy(
    boards_home: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """`ledger build` in its own process replaces the copy the boards are reading: no lock error
    on either side, every read sees a whole copy, and the next page run shows the new one."""
    from dashboards import connection

    home = tmp_path / "home"
    # The same landing files the fixture ingested (its home's landing folder).
    shutil.copytree(boards_home.landing_dir, home / "landing")
    shutil.copytree(boards_home.published_path.parent, home / "published")
    env = {
        **os.environ,
        "LEDGER_HOME": str(home),
        "LEDGER_REFERENCE_DIR": str(boards_home.reference_dir),
    }
    monkeypatch.setenv("LEDGER_HOME", str(home))
    before = connection.current_version()

    build = subprocess.Popen(
        [sys.executable, "-m", "ledger.cli", "build"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    versions, totals, page_runs = set(), set(), 0
    deadline = time.monotonic() + 240
    while build.poll() is None and time.monotonic() < deadline:
        version = connection.current_version()
        versions.add(version)
        # Uncached reads straight from the copy: always all three sessions, never a partial file.
        row = connection.run(
            version, "select count(*) as n, sum(revenue) as r from marts.fct_session_ledger"
        ).iloc[0]
        totals.add((int(row["n"]), row["r"]))
        if page_runs < 5:
            at = AppTest.from_file(str(APP), default_timeout=60).run()
            assert not at.exception, [e.value for e in at.exception]
            assert metrics(at)["Revenue"][0] == "CNY 4.00"
            page_runs += 1
        time.sleep(0.05)
    output = build.communicate(timeout=60)[0]

    assert build.returncode == 0, output
    assert "build succeeded" in output
    after = connection.current_version()
    assert after != before
    assert totals == {(3, Decimal("4.000000000000"))}
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    published = connection.publication(after)
    assert published is not None
    assert f"Published copy of {published.published_at:%Y-%m-%d %H:%M:%S} UTC" in " ".join(
        c.value for c in at.caption
    )
    assert metrics(at)["Revenue"][0] == "CNY 4.00"
