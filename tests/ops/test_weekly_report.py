"""The weekly margin review: figures equal the marts, the documents are written, the week's
anomalies and data quality are listed, and a late event restates an already reported week."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import openpyxl
import pytest

from dagster_project.defs.ledger_dbt import run_dbt
from ledger.core.calendar import WeekError, parse_iso_week, previous_iso_week
from ledger.core.numbers import round_money
from ledger.core.settings import Settings
from ledger.ingest import ingest_paths
from ledger.pipeline.publish import publish, publish_records
from ledger.report.review import write_weekly_review

NOW = datetime(2026, 11, 23, 0, 0)  # UTC: Monday 08:00 in Shanghai
SUMMED = (
    "revenue",
    "asr_cost",
    "llm_cost",
    "tts_cost",
    "realtime_cost",
    "vision_cost",
    "infra_cost",
    "total_cost",
    "gross_margin",
    "interruption_waste_cost",
    "cache_savings",
)


def _boards_restatements(version: str, first: date, last: date) -> list[tuple]:
    """The restatements the boards' Margin page lists for these dates (its query, on the
    published copy), in the review's order, counts as whole numbers as the review keeps them."""
    from dashboards.filters import Filters
    from dashboards.queries.margin import restatements
    from ledger.report.restatement import RESTATED_FIELDS

    rows = []
    for review_week, week, tenant, figure, old, new in restatements(
        version, Filters(first, last)
    ).itertuples(index=False):
        if figure == "session_count":
            old, new = Decimal(int(old)), Decimal(int(new))
        rows.append((review_week, week, tenant, figure, old, new))
    return sorted(rows, key=lambda r: (r[1], r[2], RESTATED_FIELDS.index(r[3])))


def _ledger_sums(settings: Settings, iso_week: str) -> dict[str, dict[str, Decimal]]:
    columns = ", ".join(f"sum({name}) as {name}" for name in SUMMED)
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        cursor = con.execute(
            f"select tenant_id, count(*) as session_count, {columns} "
            "from marts.fct_session_ledger where iso_week = ? group by tenant_id order by 1",
            [iso_week],
        )
        names = [c[0] for c in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return {row.pop("tenant_id"): row for row in rows}


def test_iso_weeks_parse_and_the_default_is_the_week_before() -> None:
    assert parse_iso_week("2026-W47") == (date(2026, 11, 16), date(2026, 11, 22))
    assert previous_iso_week("Asia/Shanghai", datetime(2026, 11, 23, 0, 0)) == "2026-W47"
    # Sunday 23:30 UTC is already Monday in Shanghai.
    assert previous_iso_week("Asia/Shanghai", datetime(2026, 11, 29, 23, 30)) == "2026-W48"
    with pytest.raises(WeekError, match="looks like 2026-W47"):
        parse_iso_week("2026-47")


def test_the_review_figures_equal_the_session_ledger_sums(ops_settings: Settings) -> None:
    result = write_weekly_review(ops_settings, "2026-W46", now=NOW)
    expected = _ledger_sums(ops_settings, "2026-W46")
    review = result.review
    assert [w.tenant_id for w in review.tenants] == ["acme-telecom", "bright-bank"]
    for week in review.tenants:
        for name in SUMMED:
            assert week[name] == expected[week.tenant_id][name], (week.tenant_id, name)
        assert week["session_count"] == expected[week.tenant_id]["session_count"]
    for name in SUMMED:
        assert review.total[name] == sum(row[name] for row in expected.values()), name

    total_revenue = round_money(review.total["revenue"])
    total_cost = round_money(review.total["total_cost"])
    markdown = result.markdown.read_text()
    assert f"| **total** | **{int(review.total['session_count']):,}** |" in markdown
    assert f"**{total_revenue:,}** | **{total_cost:,}** |" in markdown
    assert "<svg" in result.html.read_text() and f"{total_revenue:,}" in result.html.read_text()

    sheet = openpyxl.load_workbook(result.xlsx)["margin"]
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0][:5] == (
        "tenant",
        "sessions",
        "billable minutes",
        "revenue (CNY)",
        "total cost (CNY)",
    )
    assert rows[-1][0] == "total"
    assert Decimal(str(rows[-1][3])) == total_revenue
    assert Decimal(str(rows[-1][4])) == total_cost
    # Issue 27 point 10: the header stays in view and filters every column but the total row;
    # a percentage column says "%" once.
    assert (sheet.freeze_panes, sheet.auto_filter.ref) == ("A2", f"A1:G{len(rows) - 1}")
    assert rows[0][6] == "gross margin %"

    # What drove the cost change against W45, as on the boards: the rows and the parts add up to
    # the total shown, which is the cost shown minus the cost shown the week before.
    drivers = list(openpyxl.load_workbook(result.xlsx)["cost_drivers"].iter_rows(values_only=True))
    last = next(i for i, row in enumerate(drivers) if row[0] == "total")  # then the note
    cents = [[Decimal(str(v)) for v in row[3:]] for row in drivers[1 : last + 1]]
    *movers, total = cents
    previous_cost = round_money(sum(w["total_cost"] for w in review.previous.values()))
    assert total[:3] == [previous_cost, total_cost, total_cost - previous_cost]
    assert total[3] + total[4] + total[5] == total[2]
    for column in range(6):
        assert sum(row[column] for row in movers) == total[column], column
    for row in movers:
        assert row[3] + row[4] + row[5] == row[2]
    assert result.folder == ops_settings.reports_dir / "2026-W46"
    assert sorted(p.name for p in result.folder.iterdir()) == [
        "margin-review-2026-W46.html",
        "margin-review-2026-W46.md",
        "margin-review-2026-W46.xlsx",
    ]


def test_the_review_lists_the_weeks_anomalies_and_its_open_days(ops_settings: Settings) -> None:
    review = write_weekly_review(ops_settings, "2026-W47", now=NOW).review
    # 2026-11-21 and 22 are not closed in the data: only 11-20's anomaly can be known.
    assert review.days_closed == 5
    paged = [
        (a.business_date, a.tenant_id, a.metric) for a in review.anomalies if a.severity != "info"
    ]
    assert paged == [(date(2026, 11, 20), "bright-bank", "llm_cost")]
    markdown = (ops_settings.reports_dir / "2026-W47" / "margin-review-2026-W47.md").read_text()
    assert "| 2026-11-20 | bright-bank | LLM cost | critical |" in markdown
    assert "Only 5 of 7 days are closed in the data" in markdown


def _late_session(path: Path) -> Path:
    """One bright-bank call on Wednesday 2026-11-04 (ISO week 2026-W45) that arrives late."""
    common = {
        "source": "late-gateway",
        "tenant_id": "bright-bank",
        "session_id": "late-call-1",
    }
    events = [
        {
            **common,
            "event_id": "late-1",
            "event_type": "session.started",
            "occurred_at": "2026-11-04T10:00:00+08:00",
            "scenario": "customer_service",
            "channel": "sip",
            "pipeline": "cascade",
        },
        {
            **common,
            "event_id": "late-2",
            "event_type": "llm.usage",
            "occurred_at": "2026-11-04T10:01:00+08:00",
            "provider": "deepseek",
            "model": "deepseek-chat",
            "turn_index": 0,
            "input_tokens": 100000,
            "cached_input_tokens": 0,
            "output_tokens": 2000,
        },
        {
            **common,
            "event_id": "late-3",
            "event_type": "session.ended",
            "occurred_at": "2026-11-04T10:02:00+08:00",
            "end_reason": "user_hangup",
        },
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_a_late_event_for_a_reported_week_is_restated_in_the_next_review(
    ops_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = write_weekly_review(ops_settings, "2026-W45", now=NOW).review
    assert before.restatements == []
    reported = next(w for w in before.tenants if w.tenant_id == "bright-bank")

    ingest_paths(ops_settings, [_late_session(tmp_path / "late.jsonl")], ingest_time=NOW)
    # `dbt run` + publish rather than the whole job: half the time, the same marts for this test.
    run_dbt(ops_settings, ["run"])
    publish(ops_settings)

    result = write_weekly_review(ops_settings, "2026-W46", now=NOW)
    now_w45 = _ledger_sums(ops_settings, "2026-W45")["bright-bank"]
    restated = {
        (r.iso_week, r.tenant_id, r.figure): (r.old, r.new) for r in result.review.restatements
    }
    assert set(restated) == {
        ("2026-W45", "bright-bank", figure)
        for figure in ("session_count", "revenue", "llm_cost", "total_cost", "gross_margin")
    }
    assert restated[("2026-W45", "bright-bank", "session_count")] == (
        reported["session_count"],
        reported["session_count"] + 1,
    )
    for figure in ("revenue", "llm_cost", "total_cost", "gross_margin"):
        assert restated[("2026-W45", "bright-bank", figure)] == (reported[figure], now_w45[figure])
    markdown = result.markdown.read_text()
    old_cost, new_cost = (
        round_money(v) for v in restated[("2026-W45", "bright-bank", "total_cost")]
    )
    # The change column is now minus reported as shown, exactly (issue 27 point 6).
    change = new_cost - old_cost
    assert (
        f"| 2026-W45 | bright-bank | cost | {old_cost:,} | {new_cost:,} | "
        f"{'+' if change > 0 else ''}{change:,} |"
    ) in markdown
    sessions = [int(v) for v in restated[("2026-W45", "bright-bank", "session_count")]]
    assert (
        f"| 2026-W45 | bright-bank | sessions | {sessions[0]:,} | {sessions[1]:,} | +1 |"
    ) in markdown
    sheet = openpyxl.load_workbook(result.xlsx)["restatements"]
    assert [row[3:] for row in sheet.iter_rows(values_only=True) if row[2] == "sessions"] == [
        (sessions[0], sessions[1], 1)
    ]  # numbers, not text

    # The boards show the same restatements, once published (issue 27 point 6).
    import streamlit as st

    from dashboards.connection import current_version

    publish_records(ops_settings)
    monkeypatch.setenv("LEDGER_HOME", str(ops_settings.home))
    st.cache_data.clear()
    st.cache_resource.clear()
    boards = _boards_restatements(current_version(), date(2026, 11, 9), date(2026, 11, 22))
    st.cache_data.clear()
    st.cache_resource.clear()
    assert boards == [
        ("2026-W46", r.iso_week, r.tenant_id, r.figure, r.old, r.new)
        for r in result.review.restatements
    ]
    assert "Restated: 2026-W45" in markdown

    # The review is a record: run again, W46's review still lists what it reported, and each run's
    # documents are archived as they were sent. A restatement is listed once: the next week's
    # review has nothing new to restate.
    again = write_weekly_review(ops_settings, "2026-W46", now=NOW)
    assert again.review.restatements == result.review.restatements
    assert "Restated: 2026-W45" in again.markdown.read_text()
    assert result.archived.parent == ops_settings.reports_dir / "archive" / "2026-W46"
    assert sorted(p.name for p in result.archived.parent.iterdir()) == [
        "20261123T000000Z",
        "20261123T000000Z-2",
    ]
    assert (result.archived / result.markdown.name).read_text() == markdown
    assert sorted(p.name for p in again.archived.iterdir()) == [
        "margin-review-2026-W46.html",
        "margin-review-2026-W46.md",
        "margin-review-2026-W46.xlsx",
    ]
    later = write_weekly_review(ops_settings, "2026-W47", now=NOW).review
    assert later.restatements == []


def test_a_restatement_lists_each_figure_once() -> None:
    from ledger.report.restatement import RESTATED_FIELDS

    assert RESTATED_FIELDS == (
        "session_count",
        "revenue",
        "asr_cost",
        "llm_cost",
        "tts_cost",
        "realtime_cost",
        "vision_cost",
        "infra_cost",
        "total_cost",
        "gross_margin",
        "interruption_waste_cost",
        "cache_savings",
    )


def test_an_empty_week_says_which_week_has_data(ops_settings: Settings) -> None:
    with pytest.raises(WeekError, match="no sessions in 2026-W40: .*ISO week 2026-W47"):
        write_weekly_review(ops_settings, "2026-W40", now=NOW)


def test_the_weekly_schedule_reviews_the_iso_week_before() -> None:
    from dagster import build_schedule_context

    from dagster_project.defs.operations import build_schedules

    _, weekly = build_schedules(Settings(timezone="Asia/Shanghai"))
    tick = datetime(2026, 11, 23, 7, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    request = weekly.evaluate_tick(build_schedule_context(scheduled_execution_time=tick))
    assert request.run_requests[0].run_config == {
        "ops": {"write_margin_review": {"config": {"iso_week": "2026-W47"}}}
    }
