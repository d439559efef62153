"""`ledger replay` (SPEC 11): recorded sessions re-emitted as contract events, N copies each."""

from __future__ import annotations

import hashlib
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from ledger.core.settings import Settings
from ledger.simulate.replay import ReplayError, replay

pytestmark = pytest.mark.integration

# One day of one tenant of the planning week: a few sessions.
DAY = date(2026, 11, 3)
TENANT = "acme-telecom"
SEED = 11

# Per session: its shape (usage) and its ledger amounts; a copy must match its original exactly.
SESSION_COLUMNS = (
    "scenario, pipeline, duration_seconds, billable_minutes, turn_count, interruption_count, "
    "false_interruption_count, degradation_count, asr_cost, llm_cost, tts_cost, realtime_cost, "
    "vision_cost, infra_cost, total_cost, interruption_waste_cost, cache_savings, "
    "has_unpriced_usage"
)
USAGE_SQL = """
    select session_id, event_type, count(*), sum(coalesce(input_tokens, 0)),
        sum(coalesce(output_tokens, 0)), sum(coalesce(cached_input_tokens, 0)),
        sum(coalesce(audio_seconds, 0)), sum(coalesce(characters, 0)), sum(coalesce(images, 0)),
        sum(coalesce(quantity, 0)), sum(coalesce(endpointing_ms, 0))
    from raw.events group by all
"""


def copy_id(copy: int, tenant: str, session: str) -> str:
    """The replayed session id, worked out apart from ledger.simulate.replay."""
    return "rp-" + hashlib.sha256(f"{SEED}:{copy}:{tenant}:{session}".encode()).hexdigest()[:32]


def rows(path: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def replayed(planning_home: Settings, tmp_path_factory: pytest.TempPathFactory):
    """The planning week with one day of acme-telecom replayed at --scale 3, ingested and built."""
    from ledger.commands.build import run_build
    from ledger.ingest import ingest_paths
    from ledger.warehouse import copy_warehouse
    from tests.support.homes import INGEST_TIME

    root = tmp_path_factory.mktemp("replayed")
    settings = Settings(home=root / "home", reference_dir=planning_home.reference_dir)
    settings.ensure_dirs()
    copy_warehouse(planning_home.warehouse_path, settings.warehouse_path)
    summary = replay(
        planning_home,
        settings.landing_dir,
        date_from=DAY,
        date_to=DAY,
        tenant=TENANT,
        scale=3,
        seed=SEED,
    )
    results = ingest_paths(settings, [settings.landing_dir], ingest_time=INGEST_TIME)
    outcome = run_build(settings)
    assert outcome.success, "\n".join(outcome.lines)
    return planning_home, settings, summary, results


def test_a_replay_is_reproducible_from_its_seed(planning_home: Settings, tmp_path: Path) -> None:
    options = {"date_from": DAY, "date_to": DAY, "tenant": TENANT, "scale": 2, "seed": SEED}
    first = replay(planning_home, tmp_path / "a", **options)
    second = replay(planning_home, tmp_path / "b", **options)
    other = replay(planning_home, tmp_path / "c", **{**options, "seed": SEED + 1})
    names = [path.relative_to(tmp_path / "a") for path in first.files]
    assert names == [path.relative_to(tmp_path / "b") for path in second.files]
    assert [p.read_bytes() for p in first.files] == [p.read_bytes() for p in second.files]
    assert [p.read_bytes() for p in first.files] != [p.read_bytes() for p in other.files]
    with pytest.raises(ReplayError, match="already exists"):
        replay(planning_home, tmp_path / "a", **options)


def test_replay_refuses_an_empty_window(planning_home: Settings, tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="no recorded session of tenant acme-telecom starts"):
        replay(planning_home, tmp_path, date_from=date(2025, 1, 1), date_to=date(2025, 1, 2),
               tenant=TENANT)  # fmt: skip


def test_every_replayed_event_is_accepted_and_no_id_collides(replayed) -> None:
    original, settings, summary, results = replayed
    originals = rows(
        original.warehouse_path,
        f"select distinct session_id from raw.events where tenant_id = '{TENANT}' "
        f"and session_id in (select session_id from raw.events group by session_id "
        f"having cast(timezone('Asia/Shanghai', min(occurred_at) at time zone 'UTC') as date) "
        f"= '{DAY}')",
    )
    sessions = sorted(session for (session,) in originals)
    assert summary.sessions == len(sessions) > 2
    assert summary.copies == 3 * len(sessions)
    assert sum(result.accepted for result in results) == summary.events
    assert sum(result.duplicates + result.quarantined for result in results) == 0
    # Keys: the originals' keys and the copies' keys never meet.
    [(collisions,)] = rows(
        settings.warehouse_path,
        "select count(*) from (select source, event_id from raw.events where source like "
        "'%-replay' intersect select source || '-replay', event_id from raw.events)",
    )
    assert collisions == 0
    [(ids, copies)] = rows(
        settings.warehouse_path,
        "select count(distinct event_id), count(*) from raw.events where source like '%-replay'",
    )
    assert ids == copies == summary.events
    replayed_sessions = {
        session
        for (session,) in rows(
            settings.warehouse_path,
            "select distinct session_id from raw.events where source like '%-replay'",
        )
    }
    expected = {copy_id(copy, TENANT, session) for session in sessions for copy in (1, 2, 3)}
    assert replayed_sessions == expected
    assert not expected & set(sessions)


def test_three_copies_give_three_times_the_usage_and_cost_per_session(replayed) -> None:
    original, settings, _, _ = replayed
    before_usage = {}
    for session, *usage in rows(original.warehouse_path, USAGE_SQL):
        before_usage.setdefault(session, []).append(tuple(usage))
    after_usage = {}
    for session, *usage in rows(settings.warehouse_path, USAGE_SQL):
        after_usage.setdefault(session, []).append(tuple(usage))
    ledger_sql = f"select session_id, {SESSION_COLUMNS} from marts.fct_session_ledger"
    before = {session: values for session, *values in rows(original.published_path, ledger_sql)}
    after = {session: values for session, *values in rows(settings.published_path, ledger_sql)}
    sessions = sorted(
        session
        for session in before
        if copy_id(1, TENANT, session) in after  # the replayed ones
    )
    assert len(sessions) > 2
    for session in sessions:
        for copy in (1, 2, 3):
            twin = copy_id(copy, TENANT, session)
            assert after[twin] == before[session]
            assert sorted(after_usage[twin]) == sorted(before_usage[session])
        assert after[session] == before[session]  # the originals are untouched
    # Totals: the week's total cost grows by exactly three times the replayed sessions' cost.
    total_sql = "select sum(total_cost) from marts.fct_session_ledger"
    [(cost_before,)] = rows(original.published_path, total_sql)
    [(cost_after,)] = rows(settings.published_path, total_sql)
    cost_index = SESSION_COLUMNS.split(", ").index("total_cost")
    replayed_cost = sum(before[session][cost_index] for session in sessions)
    assert cost_after - cost_before == 3 * replayed_cost


def test_a_replayed_copy_is_flagged_and_never_revenue(replayed) -> None:
    original, settings, summary, _ = replayed
    revenue_sql = (
        "select session_id, is_replay, revenue_status, revenue from marts.fct_session_ledger"
    )
    before = {session: values for session, *values in rows(original.published_path, revenue_sql)}
    after = {session: values for session, *values in rows(settings.published_path, revenue_sql)}
    copies = {session for session, (is_replay, _, _) in after.items() if is_replay}
    assert len(copies) == summary.copies
    assert {tuple(after[session][1:]) for session in copies} == {("replay", Decimal(0))}
    # The originals keep their revenue, flag and status; the total revenue does not move.
    assert {session: after[session] for session in before} == before
    assert not any(is_replay for is_replay, _, _ in before.values())
    total_sql = "select sum(revenue), sum(total_cost) from marts.fct_session_ledger"
    [(revenue_before, _)] = rows(original.published_path, total_sql)
    [(revenue_after, _)] = rows(settings.published_path, total_sql)
    assert revenue_after == revenue_before
    # The margin marts keep the copies in rows of their own: zero revenue, all of their cost.
    copy_cost = sum(
        cost
        for session, cost in rows(
            settings.published_path, "select session_id, total_cost from marts.fct_session_ledger"
        )
        if session in copies
    )
    for mart in ("fct_tenant_daily_margin", "fct_tenant_weekly_margin"):
        assert rows(
            settings.published_path,
            f"select tenant_id, session_count, billed_session_count, revenue, total_cost, "
            f"gross_margin from marts.{mart} where is_replay",
        ) == [(TENANT, summary.copies, 0, Decimal(0), copy_cost, -copy_cost)]
        recorded = f"select * exclude (is_replay) from marts.{mart} order by all"
        assert rows(
            settings.published_path, recorded.replace("order", "where not is_replay order")
        ) == rows(original.published_path, recorded)


def test_the_weekly_review_and_the_alerts_leave_replays_out(replayed) -> None:
    from ledger.alerts.figures import check_freshness, load_tenant_days, newest_event_at
    from ledger.alerts.run import detect_day
    from ledger.report.documents import headline
    from ledger.report.weekly import load_weekly_review
    from ledger.serving.published_copy import open_published

    original, settings, summary, _ = replayed
    week_first, week_last = date(2026, 11, 2), date(2026, 11, 8)

    def figures(home: Settings) -> tuple:
        with open_published(home) as con:
            review = load_weekly_review(
                con, "2026-W45", home.reporting_currency, home.timezone, now=datetime(2026, 12, 1)
            )
            return (
                review,
                load_tenant_days(con, week_first, week_last),
                detect_day(con, week_last),
                check_freshness(con, DAY, home.timezone),
                newest_event_at(con),
            )

    before, after = figures(original), figures(settings)
    assert after[1:] == before[1:]  # the alerts' daily figures, anomalies and freshness
    assert [t for t in before[1] if t.tenant_id == TENANT and t.business_date == DAY]
    review_before, review_after = before[0], after[0]
    assert review_after.tenants == review_before.tenants
    assert review_after.previous == review_before.previous
    assert (review_before.replay_sessions, review_after.replay_sessions) == (0, summary.copies)
    assert headline(review_after) == [
        *headline(review_before),
        f"{summary.copies} replayed sessions (`ledger replay` copies) are excluded from every "
        "figure.",
    ]


def test_the_boards_leave_replays_out_unless_the_sidebar_includes_them(
    replayed, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from dashboards.formatting import money
    from ledger.core.settings import REPO_ROOT

    original, settings, summary, _ = replayed
    day_sql = (
        "select count(*), sum(revenue), sum(total_cost) from marts.fct_session_ledger "
        f"where business_date = '{DAY}' and {{}}"
    )
    [(sessions, revenue, cost)] = rows(original.published_path, day_sql.format("true"))
    [(copies, copy_revenue, copy_cost)] = rows(settings.published_path, day_sql.format("is_replay"))
    assert (copies, copy_revenue) == (summary.copies, Decimal(0))

    def overview(home: Settings, include_replays: bool) -> AppTest:
        monkeypatch.setenv("LEDGER_HOME", str(home.home))
        monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(home.reference_dir))
        at = AppTest.from_file(str(REPO_ROOT / "dashboards" / "app.py"), default_timeout=60).run()
        at.date_input(key="filter_dates").set_value((DAY, DAY)).run()
        at.toggle(key="filter_include_replays").set_value(include_replays).run()
        at.switch_page("app_pages/overview.py").run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    def shown(at: AppTest) -> dict[str, str]:
        return {m.label: m.value for m in at.metric}

    def captions(at: AppTest) -> str:
        return " ".join(c.value for c in at.caption)

    recorded = overview(original, include_replays=False)
    default = overview(settings, include_replays=False)
    assert shown(default) == shown(recorded)
    assert shown(default)["Sessions"] == f"{sessions:,}"
    assert shown(default)["Revenue"] == money(revenue, "CNY")
    assert shown(default)["Cost"] == money(cost, "CNY")
    note = (
        f"The published copy holds {summary.copies} replayed sessions (`ledger replay` copies, "
        "never revenue): left out of the figures here unless the sidebar toggle includes them."
    )
    assert note in captions(default)
    assert "replayed" not in captions(recorded)

    included = overview(settings, include_replays=True)
    assert shown(included)["Sessions"] == f"{sessions + summary.copies:,}"
    assert shown(included)["Revenue"] == money(revenue, "CNY")  # copies are never revenue
    assert shown(included)["Cost"] == money(cost + copy_cost, "CNY")
    assert shown(included)["Gross margin"] == money(revenue - cost - copy_cost, "CNY")
    assert note not in captions(included)
    assert "replayed sessions included" in captions(included)
