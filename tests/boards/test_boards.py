"""The Streamlit boards: one AppTest per page on a small warehouse whose numbers are worked out by
hand from the shipped rate card and price plans (the traffic and its arithmetic: `boards_home` in
tests/conftest.py), the empty-warehouse guide, the query rules, and reading the published copy
while `ledger build` replaces it.
"""

from __future__ import annotations

import json
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

from ledger.core.settings import REPO_ROOT, Settings
from ledger.escaping import streamlit_markdown
from tests.support.hostile_text import MARKDOWN_LINKS, live_markdown

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


def table(at: AppTest, header: str) -> pd.DataFrame:
    """The one shown table that has a column `header`."""
    found = [d.value for d in at.dataframe if header in d.value.columns]
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

    # The comparison period 2025-03-08..09 starts before the ledger (2025-03-09): every change
    # is marked partial.
    assert metrics(at) == {
        "Revenue": ("CNY 3.40", "+CNY 2.80 (+466.7%) · partial"),
        # 0.8088 against 0.0144 the previous two days (2025-03-08 and 09): the change shown is
        # the difference of the amounts shown, 0.81 - 0.01 (issue 27 point 6), not 0.7944's 0.79.
        "Cost": ("CNY 0.81", "+CNY 0.80 (+5,516.7%) · partial"),
        "Gross margin": ("CNY 2.59", "+CNY 2.00 (+342.5%) · partial"),  # 2.59 - 0.59
        "Gross margin %": ("76.21%", "-21.4 pp · partial"),
        # 0.8088 / (3 + 100/60) billable minutes = 0.1733; before 0.0144 / 1.
        "Cost per billable minute": ("CNY 0.17", "+CNY 0.16 (+1,103.6%) · partial"),
        "Interruption waste": ("CNY 0.09", "+CNY 0.09 · partial"),
        "Cache savings": ("CNY 0.43", "+CNY 0.43 · partial"),
        "Sessions": ("2", "+1 · partial"),
    }
    captions = " ".join(c.value for c in at.caption)
    assert (
        "Changes are against 2025-03-08 to 2025-03-09 (marked partial): the comparison period "
        "has no data before 2025-03-09 (2025-03-08 missing)."
    ) in captions
    assert "Published copy of " in captions


def test_a_comparison_period_without_data_shows_no_change_and_says_why(boards_env):
    # 2025-03-09 is the ledger's first day: the day before has no data at all.
    at = open_page("overview", (date(2025, 3, 9), date(2025, 3, 9)))
    assert metrics(at)["Revenue"] == ("CNY 0.60", None)
    assert {delta for _, delta in metrics(at).values()} == {None}
    assert (
        "Changes are against 2025-03-08: the ledger has no data then (it covers 2025-03-09 to "
        "2025-03-11), so no change is shown."
    ) in " ".join(c.value for c in at.caption)

    # kiddo-toys has no session in 2025-03-08..09: no change against nothing, on every page.
    at = open_page("overview")
    at.multiselect(key="filter_tenants").set_value(["kiddo-toys"]).run()
    assert metrics(at)["Cost"] == ("CNY 0.12", None)
    assert "no session then under these filters, so no change is shown" in " ".join(
        c.value for c in at.caption
    )
    at.switch_page("app_pages/margin.py").run()
    assert metrics(at)["Cost"] == ("CNY 0.12", None)
    at.switch_page("app_pages/experience.py").run()
    assert metrics(at)["Degraded sessions"] == ("100.0%", None)


def test_the_comparison_period_is_flagged_the_same_way_everywhere():
    from dashboards.comparison import Comparison, week_label
    from dashboards.filters import Filters
    from dashboards.formatting import points_delta

    def coverage(first: date, last: date) -> str:
        return Comparison(Filters(first, last), Filters(first, last).previous(), *LEDGER).coverage

    LEDGER = (date(2025, 3, 9), date(2025, 3, 20))
    assert coverage(date(2025, 3, 11), date(2025, 3, 12)) == "full"  # against 03-09..10
    assert coverage(date(2025, 3, 10), date(2025, 3, 11)) == "partial"  # 03-08 missing
    assert coverage(date(2025, 3, 19), date(2025, 3, 21)) == "partial"  # 03-21 not there yet
    assert coverage(date(2025, 3, 9), date(2025, 3, 10)) == "empty"
    comparison = Comparison(Filters(*PERIOD), Filters(*PERIOD).previous(), *LEDGER)
    assert comparison.delta("+CNY 1.00") == "+CNY 1.00 · partial"
    assert comparison.column("Revenue change") == "Revenue change · partial"
    assert comparison.counted(0).delta("+CNY 1.00") is None
    # A change that rounds to nothing has no sign (was "+-0.0 pp").
    assert points_delta(Decimal("50.00"), Decimal("50.04")) == "0.0 pp"
    assert points_delta(Decimal("50.00"), Decimal("50.06")) == "-0.1 pp"
    assert week_label("2025-W11", date(2025, 3, 10), *PERIOD) == (
        "2025-W11 (Mar 10–Mar 16) · partial, 2 of 7 days"
    )
    assert week_label("2025-W11", date(2025, 3, 10), date(2025, 3, 1), date(2025, 3, 31)) == (
        "2025-W11 (Mar 10–Mar 16)"
    )


def test_margin_board_splits_money_by_tenant_period_component_and_phase(boards_env):
    at = open_page("margin")

    tenants = frame(at, "Open")
    # The drill-down link and the key figures first, each next to its change; the breakdown
    # after them (issue 27 point 2).
    assert list(tenants.columns)[:9] == [
        "Open",
        "Tenant",
        "Gross margin (CNY)",
        "Gross margin change · partial (CNY)",
        "Gross margin (%)",
        "Revenue (CNY)",
        "Revenue change · partial (CNY)",
        "Cost (CNY)",
        "Cost change · partial (CNY)",
    ]
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
    # Each tenant against 2025-03-08..09 (partial: the ledger starts on the 9th): acme-s0's
    # 0.60 revenue, 0.0144 cost and 0.5856 margin; kiddo-toys had no session then, so its
    # change is against nothing. The tenants' changes add up to the headline's (issue 27
    # point 7): revenue 1.20 + 1.60 = +2.80; cost 0.6694 (0.6838 - 0.0144) and 0.125 round to
    # 0.67 + 0.12 = 0.79, the headline shows 0.81 - 0.01 = +0.80, so kiddo's (rounded down the
    # most) moves up a cent; margin 0.5306 + 1.475 round to 0.53 + 1.48 = 2.01 against the shown
    # 2.59 - 0.59 = +2.00, so kiddo's (rounded up the most) moves down.
    assert records(
        tenants,
        [
            "Tenant",
            "Revenue change · partial (CNY)",
            "Cost change · partial (CNY)",
            "Gross margin change · partial (CNY)",
            "Open",
        ],
    ) == [
        (
            "acme-telecom",
            1.20,
            0.67,
            0.53,
            "sessions?from=2025-03-10&tenant=acme-telecom&to=2025-03-11",
        ),
        (
            "kiddo-toys",
            1.60,
            0.13,
            1.47,
            "sessions?from=2025-03-10&tenant=kiddo-toys&to=2025-03-11",
        ),
    ]
    assert metrics(at)["Revenue"] == ("CNY 3.40", "+CNY 2.80 (+466.7%) · partial")
    assert metrics(at)["Gross margin %"] == ("76.21%", "-21.4 pp · partial")

    costs = frame(at, "Component")
    # The rows add up to the total 0.8088 -> 0.81 at display precision: half-even alone would
    # show pstn 0.075 and gpu_path 0.015 both as 0.02 more (0.82); the first of the two lines
    # rounded up the most, pstn, shows 0.07.
    assert records(costs, ["Component", "Provider", "Model", "Cost (CNY)", "Unpriced lines"]) == [
        ("LLM", "deepseek", "deepseek-chat", 0.38, 0),
        ("TTS", "aliyun", "cosyvoice-v2", 0.20, 0),
        ("Vision", "qwen", "qwen-vl-plus", 0.08, 0),
        ("Infra", "telco", "pstn", 0.07, 0),
        ("LLM", "qwen", "qwen-turbo", 0.03, 0),
        ("ASR", "aliyun", "paraformer-realtime-v2", 0.03, 0),
        ("Infra", "in-house", "gpu_path", 0.02, 0),
        ("LLM", "acme-llm", "x", 0.00, 3),
    ]
    assert round(costs["Cost (CNY)"].sum(), 2) == 0.81
    assert metrics(at)["Cost"][0] == "CNY 0.81"

    # From marts.fct_cost_by_phase_route; 0.38 + 0.03 + 0.00 = the LLM cost 0.41 (0.395 + 0.015).
    phases = frame(at, "Phase")
    assert records(
        phases, ["Phase", "Route", "LLM cost (CNY)", "LLM calls", "Input tokens", "Unpriced calls"]
    ) == [
        ("substantive", "large", 0.38, 1, 300000, 0),
        ("intake", "small", 0.03, 1, 50000, 0),
        ("greeting", "small", 0.00, 1, 20, 1),
    ]
    # 0.30 + 0.00 + 0.10 + 0.032 = 0.432: the kinds add up to the 0.43 on the overview.
    assert {k: v for k, v in metrics(at).items() if "cache" in k} == {
        "LLM prefix cache": ("CNY 0.30", None),
        "Realtime prefix cache": ("CNY 0.00", None),
        "TTS phrase cache": ("CNY 0.10", None),
        "Vision embedding cache": ("CNY 0.03", None),
    }

    at.segmented_control(key="margin_grain").set_value("week").run()
    weeks = frame(at, "Period")
    # Only 2 of the week's days are selected: the week is marked partial, with its dates.
    assert records(
        weeks, ["Period", "Tenant", "Revenue (CNY)", "Gross margin (CNY)", "Sessions to triage"]
    ) == [
        (
            "2025-W11 (Mar 10–Mar 16) · partial, 2 of 7 days",
            "acme-telecom",
            1.80,
            1.12,
            "sessions?from=2025-03-10&tenant=acme-telecom&to=2025-03-11",
        ),
        (
            "2025-W11 (Mar 10–Mar 16) · partial, 2 of 7 days",
            "kiddo-toys",
            1.60,
            1.48,
            "sessions?from=2025-03-10&tenant=kiddo-toys&to=2025-03-11",
        ),
    ]


def test_experience_board_draws_the_latency_budget_table_per_profile_coloured_by_overshoot(
    boards_env,
):
    at = open_page("experience")

    budget = frame(at, "Budget profile")
    # The owner next to the segment, never cut off at the right edge (issue 27 point 2).
    columns = [
        "Budget profile",
        "Segment",
        "Owner",
        "Budget (ms)",
        "P95 (ms)",
        "P95 vs budget",
        "Status",
        "P50 (ms)",
        "Turns over budget (%)",
        "Turns measured",
    ]
    assert list(budget.columns)[: len(columns)] == columns
    # One budget per row (customer_service: the conversational profile, kiddo's hardware the
    # embodied one), never a range. acme-s1's endpointing 200 and 300 ms: P95 = 200 + 0.95 x
    # 100 = 295 against 250, +18.0%, in the 10-25% band.
    values = [c for c in columns if c != "Owner"] + ["Owner"]
    assert records(budget, values) == [
        (
            "customer_service",
            "Endpointing",
            250.0,
            295.0,
            "+18.0%",
            "10–25% over",
            250.0,
            50.0,
            2,
            "audio",
        ),
        (
            "customer_service",
            "STT finalisation",
            150.0,
            119.0,
            "-20.7%",
            "within budget",
            110.0,
            0.0,
            2,
            "audio",
        ),
        (
            "customer_service",
            "LLM time to first token",
            300.0,
            392.5,
            "+30.8%",
            "more than 25% over",
            325.0,
            50.0,
            2,
            "inference",
        ),
        (
            "customer_service",
            "TTS first frame",
            120.0,
            109.5,
            "-8.8%",
            "within budget",
            105.0,
            0.0,
            2,
            "audio",
        ),
        (
            "customer_service",
            "Network / playback",
            60.0,
            49.5,
            "-17.5%",
            "within budget",
            45.0,
            0.0,
            2,
            "platform",
        ),
        (
            "customer_service",
            "First audio (total)",
            1000.0,
            848.5,
            "-15.2%",
            "within budget",
            835.0,
            0.0,
            2,
            "all",
        ),
        (
            "hardware",
            "Endpointing",
            150.0,
            100.0,
            "-33.3%",
            "within budget",
            100.0,
            0.0,
            1,
            "audio",
        ),
        (
            "hardware",
            "STT finalisation",
            80.0,
            60.0,
            "-25.0%",
            "within budget",
            60.0,
            0.0,
            1,
            "audio",
        ),
        (
            "hardware",
            "LLM time to first token",
            160.0,
            200.0,
            "+25.0%",
            "10–25% over",
            200.0,
            100.0,
            1,
            "inference",
        ),
        (
            "hardware",
            "TTS first frame",
            80.0,
            70.0,
            "-12.5%",
            "within budget",
            70.0,
            0.0,
            1,
            "audio",
        ),
        (
            "hardware",
            "Network / playback",
            30.0,
            20.0,
            "-33.3%",
            "within budget",
            20.0,
            0.0,
            1,
            "platform",
        ),
        (
            "hardware",
            "First audio (total)",
            500.0,
            450.0,
            "-10.0%",
            "within budget",
            450.0,
            0.0,
            1,
            "all",
        ),
    ]
    # A segment row drills into its slowest sessions, within the profile's scenarios.
    assert budget["Slowest sessions"].iloc[2] == (
        "sessions?from=2025-03-10&scenario=customer_service&sort=slowest%3Allm_ttft&to=2025-03-11"
    )
    captions = " ".join(c.value for c in at.caption)
    # The profile is reference data, escaped as Markdown (`\_` shows as `_`).
    assert (
        "Worst line at P95: **LLM time to first token** of customer\\_service (owner: inference), "
        "+30.8% against its budget."
    ) in captions

    # First audio over all three complete turns (850, 820, 450 ms); the comparison period had
    # no turn, so no latency change; degraded sessions 0 of 1 then, 1 of 2 now.
    assert metrics(at) == {
        "First audio P50": ("820.0 ms", None),
        "First audio P95": ("847.0 ms", None),
        "Turns over first-audio budget": ("0.0%", None),
        "Degraded sessions": ("50.0%", "+50.0 pp · partial"),
        "Interruption rate": ("33.3%", None),
        "False interruption rate": ("100.0%", None),
        # 200k cached of 350k input tokens; 500 of 1500 TTS characters.
        "Prefix cache hit rate": ("57.1%", None),
        "TTS phrase cache hit rate": ("33.3%", None),
    }
    assert "Vision embedding cache hit rate: 28.6%" in captions

    kinds = frame(at, "Kind")
    assert records(kinds, ["Kind", "Events", "Sessions", "Share of sessions (%)"])[0] == (
        "TTS filler",
        1,
        1,
        50.0,
    )
    peaks = frame(at, "Tenant")
    assert records(peaks, ["Tenant", "Peak concurrent sessions"]) == [
        ("acme-telecom", 1),
        ("kiddo-toys", 1),
    ]


def test_the_latency_budget_breaks_down_by_tenant_scenario_pipeline_and_provider(boards_env):
    at = open_page("experience")

    def line(breakdown: str, segment: str) -> list[tuple]:
        at.segmented_control(key="experience_budget_breakdown").set_value(breakdown).run()
        assert not at.exception, [e.value for e in at.exception]
        header = {
            "tenant": "Tenant",
            "scenario": "Scenario",
            "pipeline": "Pipeline",
            "provider": "LLM / realtime provider",
        }[breakdown]
        shown = frame(at, "Budget profile")
        rows = shown[shown["Segment"] == segment]
        return records(rows, ["Budget profile", header, "P95 (ms)", "Status"])

    assert line("tenant", "LLM time to first token") == [
        ("customer_service", "acme-telecom", 392.5, "more than 25% over"),
        ("hardware", "kiddo-toys", 200.0, "10–25% over"),
    ]
    assert line("pipeline", "Endpointing") == [
        ("customer_service", "cascade", 295.0, "10–25% over"),
        ("hardware", "cascade", 100.0, "within budget"),
    ]
    # acme-s1's turn 0 went to deepseek (400 ms to first token), turn 1 to the unpriced acme-llm.
    assert line("provider", "LLM time to first token") == [
        ("customer_service", "acme-llm", 250.0, "within budget"),
        ("customer_service", "deepseek", 400.0, "more than 25% over"),
        ("hardware", "qwen", 200.0, "10–25% over"),
    ]
    assert line("scenario", "First audio (total)") == [
        ("customer_service", "customer_service", 848.5, "within budget"),
        ("hardware", "hardware", 450.0, "within budget"),
    ]
    tenant_link = frame(at, "Budget profile")["Slowest sessions"].iloc[0]
    assert tenant_link.startswith("sessions?from=2025-03-10&scenario=")


def test_overshoot_bands_colour_the_budget_cells():
    from dashboards.presentation import overshoot_band

    names = [
        overshoot_band(ratio)[0] for ratio in (0.5, 1.0, 1.0001, 1.1, 1.25, 1.2501, float("nan"))
    ]
    assert names == [
        "within budget",
        "within budget",
        "up to 10% over",
        "up to 10% over",
        "10–25% over",
        "more than 25% over",
        "not measured",
    ]
    styles = {overshoot_band(ratio)[1] for ratio in (0.5, 1.05, 1.2, 2.0)}
    assert len(styles) == 4 and "" not in styles
    assert overshoot_band(None) == ("not measured", "")


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
    # The drill-down link, then money and the two rates it is read against, next to the pinned
    # tenant (issue 27 point 2).
    assert list(frame(at, "Open").columns)[:7] == [
        "Open",
        "Tenant",
        "Gross margin (CNY)",
        "Gross margin (%)",
        "Gross margin change · partial (CNY)",
        "False interruption rate (%)",
        "Prefix cache hit rate (%)",
    ]
    # acme-telecom: 1.1162 now against acme-s0's 0.5856; kiddo-toys had no session then: its
    # change is against nothing, 1.475 half-even.
    assert records(frame(at, "Open"), ["Tenant", "Gross margin change · partial (CNY)"]) == [
        ("kiddo-toys", 1.48),
        ("acme-telecom", 0.53),
    ]
    # Sorted by gross margin, highest first, by default.
    assert records(frame(at, "Open"), columns) == [
        ("kiddo-toys", 0.12, 1.48, 92.19, None, 0.0, 450.0),
        ("acme-telecom", 0.68, 1.12, 62.01, 100.0, 66.7, 848.5),
    ]

    at.selectbox(key="combined_sort").set_value("false_interruption_rate").run()
    assert [row[0] for row in records(frame(at, "Open"), columns)] == [
        "acme-telecom",
        "kiddo-toys",
    ]
    at.selectbox(key="combined_sort").set_value("total_cost").run()
    at.toggle(key="combined_descending").set_value(False).run()
    assert [row[0] for row in records(frame(at, "Open"), columns)] == [
        "kiddo-toys",
        "acme-telecom",
    ]


def test_session_explorer_finds_a_session_by_id_and_shows_its_lines_and_turns(boards_env):
    at = open_page("sessions")
    assert records(frame(at, "Link"), ["Session", "Tenant"]) == [
        ("kiddo-s1", "kiddo-toys"),
        ("acme-s1", "acme-telecom"),
    ]

    # By id, whatever the sidebar's period: acme-s0 is from the day before it.
    at.text_input(key="sessions_search").set_value("ACME-S").run()
    assert [row[0] for row in records(frame(at, "Link"), ["Session"])] == ["acme-s1", "acme-s0"]
    assert at.selectbox(key="sessions_selected").value == "acme-s1"
    assert metrics(at) == {
        "Revenue": ("CNY 1.80", None),
        "Cost": ("CNY 0.68", None),
        "Gross margin": ("CNY 1.12", None),
        "Interruption waste": ("CNY 0.09", None),
        "Cache savings": ("CNY 0.40", None),
    }
    turns = table(at, "Endpointing (ms)")
    assert list(turns.columns)[:4] == [
        "Turn",
        "First audio (ms)",
        "First-audio budget (ms)",
        "Over budget",
    ]
    assert records(
        turns,
        [
            "Turn",
            "Endpointing (ms)",
            "LLM time to first token (ms)",
            "First audio (ms)",
            "Over budget",
        ],
    ) == [
        (0, 200.0, 400.0, 850.0, "LLM time to first token"),
        (1, 300.0, 250.0, 820.0, "Endpointing"),
    ]

    lines = table(at, "Amount (CNY)")
    assert list(lines.columns)[:4] == ["Meter", "Amount (CNY)", "Savings (CNY)", "Cache hit"]
    # To 4 places the lines add up to the session's exact cost 0.6838 and savings 0.40; no
    # price is a blank, not 0; every line served from a cache is flagged as a cache hit.
    assert records(lines, ["Provider", "Meter", "Amount (CNY)", "Savings (CNY)", "Cache hit"]) == [
        ("aliyun", "ASR audio seconds", 0.0288, 0.0, False),
        ("deepseek", "LLM cached input tokens", 0.1, 0.3, True),
        ("deepseek", "LLM input tokens", 0.2, 0.0, False),
        ("deepseek", "LLM output tokens", 0.08, 0.0, False),
        ("aliyun", "TTS characters", 0.2, 0.0, False),
        ("acme-llm", "LLM cached input tokens", None, None, True),
        ("acme-llm", "LLM input tokens", None, 0.0, False),
        ("acme-llm", "LLM output tokens", None, 0.0, False),
        ("aliyun", "TTS characters", 0.0, 0.1, True),
        ("telco", "Infra path minutes", 0.075, 0.0, False),
    ]
    # Blank, not "None", where a line has no reason to be unpriced.
    assert list(lines["Unpriced because"]).count("") == 7
    assert lines["Unpriced because"].notna().all()
    assert round(lines["Amount (CNY)"].sum(), 4) == 0.6838
    captions = " ".join(c.value for c in at.caption)
    assert "lines CNY 0.6838 = session cost CNY 0.6838" in captions
    assert "savings CNY 0.4000 = session cache savings CNY 0.4000" in captions

    interruptions = table(at, "Wasted tokens")
    assert records(interruptions, ["Turn", "False", "Wasted tokens", "Waste (CNY)"]) == [
        (0, True, 5000, 0.09)
    ]
    hits = table(at, "Saved (CNY)")
    assert records(hits, ["Meter", "Cache", "Saved (CNY)"]) == [
        ("LLM cached input tokens", "LLM prefix cache", 0.3),
        ("LLM cached input tokens", "LLM prefix cache", None),
        ("TTS characters", "TTS phrase cache", 0.1),
    ]
    assert "No degradations." in [c.value for c in at.caption]

    at.selectbox(key="sessions_selected").set_value("acme-s0").run()
    assert metrics(at)["Revenue"] == ("CNY 0.60", None)


def test_session_triage_filters_sorts_pages_and_opens_a_clicked_row(boards_env):
    at = open_page("sessions", (date(2025, 3, 9), date(2025, 3, 11)))

    def shown() -> list[str]:
        return [row[0] for row in records(frame(at, "Link"), ["Session"])]

    assert shown() == ["kiddo-s1", "acme-s1", "acme-s0"]
    # Over budget: acme-s1 (both turns) and kiddo-s1 (LLM 200 ms > 160 on the embodied profile);
    # acme-s0 measured no turn.
    assert records(frame(at, "Link"), ["Session", "Turns over budget", "Unpriced usage"]) == [
        ("kiddo-s1", 1, False),
        ("acme-s1", 2, True),
        ("acme-s0", 0, False),
    ]
    for flags, expected in (
        (["over_budget"], ["kiddo-s1", "acme-s1"]),
        (["degraded"], ["kiddo-s1"]),
        (["unpriced"], ["acme-s1"]),
        (["over_budget", "unpriced"], ["acme-s1"]),
    ):
        at.multiselect(key="sessions_flags").set_value(flags).run()
        assert shown() == expected, flags
        count = f"{len(expected)} session{'' if len(expected) == 1 else 's'} with "
        assert at.caption[1].value.startswith(count), flags
    at.multiselect(key="sessions_flags").set_value(["negative_margin"]).run()
    assert [i.value for i in at.info] == ["No session matches the filters."]
    at.multiselect(key="sessions_flags").set_value([]).run()

    # Margins 0.5856, 1.1162, 1.475; LLM first tokens at most 400 (acme-s1), 200, none.
    for sort, expected in (
        ("margin", ["acme-s0", "acme-s1", "kiddo-s1"]),
        ("cost", ["acme-s1", "kiddo-s1", "acme-s0"]),
        ("slowest:llm_ttft", ["acme-s1", "kiddo-s1", "acme-s0"]),
    ):
        at.selectbox(key="sessions_sort").set_value(sort).run()
        assert shown() == expected, sort

    # Clicking a row opens its session.
    at.session_state[at.session_state["_sessions_listing"]] = {
        "selection": {"rows": [1], "columns": []}
    }
    at.run()
    assert at.selectbox(key="sessions_selected").value == "kiddo-s1"
    assert metrics(at)["Revenue"] == ("CNY 1.60", None)

    # Issue 27 point 4: after a sort or filter change the page names the session it shows (the
    # clicked row's index, kept, would have named the new list's second row, acme-s0).
    def named() -> tuple[str, str, str]:
        heading = next(h.value for h in at.subheader if h.value.startswith("Session "))
        caption = next(c.value for c in at.caption if c.value.startswith("Showing session"))
        return at.selectbox(key="sessions_selected").value, heading, caption

    at.selectbox(key="sessions_sort").set_value("margin").run()
    assert shown() == ["acme-s0", "acme-s1", "kiddo-s1"]
    assert named() == (
        "kiddo-s1",
        "Session kiddo-s1",
        "Showing session kiddo-s1: row 3 of this page.",
    )
    at.multiselect(key="sessions_flags").set_value(["unpriced"]).run()
    assert shown() == ["acme-s1"]
    assert named() == ("acme-s1", "Session acme-s1", "Showing session acme-s1: row 1 of this page.")


def test_session_list_pages_instead_of_capping(boards_env):
    from dashboards import connection
    from dashboards.filters import Filters
    from dashboards.queries.sessions import count_sessions, find_sessions

    version = connection.current_version()
    filters = Filters(date(2025, 3, 9), date(2025, 3, 11))
    assert count_sessions(version, filters) == 3
    pages = [find_sessions(version, filters, page=p, page_size=2) for p in (1, 2, 3)]
    assert [list(p["session_id"]) for p in pages] == [["kiddo-s1", "acme-s1"], ["acme-s0"], []]
    # The newest-first page is picked before its turns are summed: each keeps its own figures.
    assert [list(p["turns_over_budget"]) for p in pages] == [[1, 2], [0], []]
    with pytest.raises(ValueError, match="not one of"):
        find_sessions(version, filters, sort="slowest:x; drop table y")
    with pytest.raises(ValueError, match="not one of"):
        find_sessions(version, filters, flags=("1=1",))


def test_a_link_opens_the_session_explorer_on_its_tenant_and_days(boards_env):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["from"] = "2025-03-09"
    at.query_params["to"] = "2025-03-10"
    at.query_params["tenant"] = "acme-telecom"
    at.query_params["sort"] = "margin"
    at.run()
    at.switch_page("app_pages/sessions.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert records(frame(at, "Link"), ["Session", "Date"]) == [
        ("acme-s0", date(2025, 3, 9)),
        ("acme-s1", date(2025, 3, 10)),
    ]
    # The link's filters are the sidebar's (issue 27 point 5), and the URL keeps them.
    assert at.selectbox(key="filter_period").value == "custom"
    assert at.date_input(key="filter_dates").value == (date(2025, 3, 9), date(2025, 3, 10))
    assert at.multiselect(key="filter_tenants").value == ["acme-telecom"]
    assert {k: at.query_params[k] for k in ("from", "to", "tenant", "sort")} == {
        "from": "2025-03-09",
        "to": "2025-03-10",
        "tenant": "acme-telecom",
        "sort": "margin",
    }

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["session"] = "acme-s0"
    at.run()
    at.switch_page("app_pages/sessions.py").run()
    assert at.selectbox(key="sessions_selected").value == "acme-s0"
    assert metrics(at)["Revenue"] == ("CNY 0.60", None)


def test_an_unknown_session_in_the_link_is_named_as_such_never_a_traceback(boards_env):
    """Issue 41 point 5 (an IndexError with server paths) and point 1 (a link's text rendered as
    Markdown: a live link and an image fetched)."""
    for linked, shown in (
        ("no-such-session", "no-such-session"),
        (MARKDOWN_LINKS, streamlit_markdown.escape(MARKDOWN_LINKS)),
    ):
        at = AppTest.from_file(str(APP), default_timeout=60)
        at.query_params["session"] = linked
        at.query_params["from"], at.query_params["to"] = "2025-03-10", "2025-03-10"
        at.run()
        at.switch_page("app_pages/sessions.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert [w.value for w in at.warning] == [
            f"No such session in your tenants: “{shown}”. Check the link, or find the session "
            "below by its id."
        ]
        # The list of the period's sessions is there, and its first one opened.
        (first,) = records(frame(at, "Link"), ["Session"])[:1]
        assert at.selectbox(key="sessions_selected").value == first[0]
        rendered = [
            *(m.value for m in at.markdown), *(c.value for c in at.caption),
            *(w.value for w in at.warning), *(h.value for h in at.subheader),
        ]  # fmt: skip
        assert [live for text in rendered for live in live_markdown(text)] == []


def test_data_quality_shows_quarantine_unpriced_usage_and_freshness(boards_env):
    at = open_page("data_quality")

    shown = metrics(at)
    assert shown["Newest event"] == ("2025-03-11 03:01 UTC", None)
    assert shown["Quarantined rows"] == ("2", None)
    # acme-llm's three lines, none in the comparison period 2025-03-08..09 (partial).
    assert shown["Unpriced usage lines"] == ("3", "+3 · partial")
    assert shown["Ingested files"] == ("2", None)
    assert shown["Last build published"][0].endswith(" UTC")
    assert shown["Data lag"][0].endswith(" min")
    captions = " ".join(c.value for c in at.caption)
    assert "so the tenant, scenario and date filters do not apply to them" in captions
    assert records(frame(at, "Reason"), ["Reason", "Rows"]) == [
        ("malformed_json", 1),
        ("unknown_field", 1),
    ]
    by_file = frame(at, "Source file")
    assert sorted(Path(p).name for p in by_file["Source file"]) == [
        "boards-bad-rows.jsonl",
        "boards-bad-rows.jsonl",
    ]
    # Files dropped into the landing folder (no collector) count from their ingest.
    accepted = int(frame(at, "File")["Accepted"].sum())
    lag = records(frame(at, "Source"), ["Source", "Files", "Events"])
    assert lag == [("(landing folder)", 2, accepted)]
    unpriced = frame(at, "Component")
    assert records(unpriced, ["Component", "Provider", "Model", "Meter", "Lines"]) == [
        ("LLM", "acme-llm", "x", "LLM cached input tokens", 1),
        ("LLM", "acme-llm", "x", "LLM input tokens", 1),
        ("LLM", "acme-llm", "x", "LLM output tokens", 1),
    ]


def test_sidebar_filters_apply_to_every_page(boards_env):
    at = open_page("overview")
    at.multiselect(key="filter_tenants").set_value(["kiddo-toys"]).run()
    assert metrics(at)["Revenue"][0] == "CNY 1.60"
    assert metrics(at)["Cost"][0] == "CNY 0.12"
    at.switch_page("app_pages/combined.py").run()
    assert [r[0] for r in records(frame(at, "Open"), ["Tenant"])] == ["kiddo-toys"]
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


def test_the_data_lag_reads_in_days_hours_and_minutes():
    from datetime import datetime

    from dashboards.formatting import lag_text

    published = datetime(2025, 3, 12, 8, 0)
    assert lag_text(published, datetime(2025, 3, 11, 3, 1, 40)) == "1 d 4 h 58 min"
    assert lag_text(published, datetime(2025, 3, 12, 7, 15)) == "45 min"
    assert lag_text(published, None) == "—"


def test_amounts_round_so_the_rows_add_up_to_their_total():
    from ledger.core.numbers import round_to_total

    def shown(*values: str | None, places: int = 2) -> list[str | None]:
        rounded = round_to_total([None if v is None else Decimal(v) for v in values], places)
        return [None if v is None else str(v) for v in rounded]

    # Half-even alone: 0.38 + 0.08 + 0.02 = 0.48 against a total of 0.4688 -> 0.47.
    assert shown("0.38", "0.075", "0.015") == ["0.38", "0.07", "0.02"]
    # Already adding up: plain half-even (0.125 -> 0.12).
    assert shown("0.125", "1.475") == ["0.12", "1.48"]
    # Short of the total: the value rounded down the most goes up.
    assert shown("0.334", "0.333", "0.333") == ["0.34", "0.33", "0.33"]
    # Unknown stays unknown and is not part of the total.
    assert shown("0.0288", None, "0.655", places=4) == ["0.0288", None, "0.6550"]


def test_money_is_rounded_half_even_to_the_cent_with_its_currency():
    from dashboards.formatting import money, money_delta

    assert money(Decimal("0.125"), "CNY") == "CNY 0.12"
    assert money(Decimal("0.135"), "CNY") == "CNY 0.14"
    assert money(Decimal("-1234.565"), "USD") == "USD -1,234.56"
    assert money(None, "CNY") == "—"
    # A change that leaves the cents alike is said to 4 places, never "-CNY 0.00 (-0.4%)"
    # (issue 27 point 10); a non-zero amount under half a cent too.
    assert money_delta(Decimal("0.9"), Decimal("0.9035"), "CNY") == "-CNY 0.0035 (-0.4%)"
    assert money(Decimal("0.0043"), "CNY") == "CNY 0.0043"
    assert money(Decimal("0.00004"), "CNY") == "CNY < 0.0001"


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

    # Its output to a file, not a pipe nobody reads while it runs: the build's log fills a pipe's
    # buffer and would then block the build for good.
    log = (tmp_path / "build.log").open("w")
    build = subprocess.Popen(
        [sys.executable, "-m", "ledger.commands.cli", "build"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    versions, totals, page_runs = set(), set(), 0
    while build.poll() is None:
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
    build.wait()
    log.close()
    output = (tmp_path / "build.log").read_text()

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


def test_period_presets_count_back_from_the_newest_date_with_data():
    from dashboards.filters import default_period, preset_period

    first, last = date(2026, 11, 1), date(2026, 11, 30)  # a Monday
    assert default_period(first, last) == (date(2026, 11, 23), date(2026, 11, 29))  # W48
    assert preset_period("this-week", first, last) == (date(2026, 11, 30), date(2026, 11, 30))
    assert preset_period("month-to-date", first, last) == (date(2026, 11, 1), last)
    assert preset_period("last-month", first, last) == (date(2026, 10, 1), date(2026, 10, 31))
    # On a Sunday the week just ended is the last complete one; a ledger younger than a week is
    # shown whole.
    assert default_period(first, date(2026, 11, 29)) == (date(2026, 11, 23), date(2026, 11, 29))
    assert default_period(date(2025, 3, 9), date(2025, 3, 11)) == (
        date(2025, 3, 9),
        date(2025, 3, 11),
    )
    with pytest.raises(ValueError, match="no period preset"):
        preset_period("fortnight", first, last)


def test_a_preset_and_every_filter_are_in_the_url_and_a_link_reproduces_the_view(boards_env):
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    # The default: the last complete ISO week (here the whole young ledger), as the review.
    assert at.selectbox(key="filter_period").value == "last-week"
    assert at.query_params["period"] == "last-week"
    at.multiselect(key="filter_tenants").set_value(["acme-telecom"]).run()
    at.date_input(key="filter_dates").set_value(PERIOD).run()
    assert at.selectbox(key="filter_period").value == "custom"
    link = dict(at.query_params)
    assert link == {"from": "2025-03-10", "to": "2025-03-11", "tenant": "acme-telecom"}
    shown = metrics(at)

    again = AppTest.from_file(str(APP), default_timeout=60)
    for key, values in link.items():
        again.query_params[key] = values
    again.run()
    assert metrics(again) == shown
    assert again.date_input(key="filter_dates").value == PERIOD


def test_one_selected_day_is_drawn_by_hour_never_on_a_millisecond_axis(boards_env):
    at = open_page("overview", (date(2025, 3, 10), date(2025, 3, 10)))
    assert [h.value for h in at.subheader][0] == "Revenue, cost and margin per hour"
    trend = next(c for c in at.get("plotly_chart") if "overview_trend" in c.proto.id)
    figure = json.loads(trend.proto.spec)
    layout = figure["layout"]["xaxis"]
    assert (layout["type"], layout["tickformat"], layout["dtick"]) == ("date", "%H:%M", 7_200_000)
    # acme-s1 started 2025-03-10 02:00 UTC: 10:00 in Asia/Shanghai.
    assert figure["data"][0]["x"] == ["2025-03-10T10:00:00"]

    at = open_page("overview")  # two days: by day, one tick a day
    layout = json.loads(
        next(c for c in at.get("plotly_chart") if "overview_trend" in c.proto.id).proto.spec
    )["layout"]["xaxis"]
    assert (layout["tickformat"], layout["dtick"]) == ("%b %d", 86_400_000)
