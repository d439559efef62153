"""No event that passes ingest can make a build or publish fail (issue 26, SPEC 3).

Two events that used to pass ingest and then stop every run, landed beside a simulated day: an
`llm.usage` whose session already belongs to another tenant (it failed the dbt test
`unique_fct_focus_charges`, naming no event) and one dated 0001-01-01 (publish failed in
`isocalendar`). A real build and publish now succeed, the simulated events are the ledger, and the
two wait in the quarantine with their reasons.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

import duckdb
import pytest

from ledger.core.settings import REPO_ROOT, Settings
from ledger.simulate.simulation import SimulationSummary

pytestmark = pytest.mark.integration


def _rows(path: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


def _simulated_day(tmp_path: Path) -> tuple[Settings, SimulationSummary, dict, dict]:
    """A home with one simulated day of two tenants landed; a usage event of the first tenant
    and a copy of it under the second tenant (same session)."""
    from ledger.simulate import simulate

    settings = Settings(home=tmp_path / "home", reference_dir=REPO_ROOT / "data" / "reference")
    settings.ensure_dirs()
    summary = simulate(
        settings.landing_dir,
        tenants=2,
        days=1,
        start=date(2026, 11, 15),
        sessions_per_day=4,
        bad_row_share=0.0,
        duplicate_share=0.0,
    )
    events = [
        json.loads(line)
        for path in summary.files
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    tenants = sorted({e["tenant_id"] for e in events})
    assert len(tenants) == 2
    victim = next(
        e for e in events if e["event_type"] == "llm.usage" and e["tenant_id"] == tenants[0]
    )
    return (
        settings,
        summary,
        victim,
        {**victim, "event_id": "poison-tenant", "tenant_id": tenants[1]},
    )


def test_poison_events_beside_good_ones_are_quarantined_and_the_build_publishes(
    tmp_path: Path,
) -> None:
    from ledger.commands.build import run_build

    settings, summary, victim, spoof = _simulated_day(tmp_path)
    tenants = [victim["tenant_id"], spoof["tenant_id"]]
    zero_clock = {
        **victim,
        "event_id": "poison-year-1",
        "session_id": "poison-session",
        "occurred_at": "0001-01-01T00:00:00Z",
    }
    # 2**62 tokens overflowed the pricing; the most a metered count may be still prices.
    overflow = {**victim, "event_id": "poison-tokens", "input_tokens": 2**62}
    most = {**victim, "event_id": "most-tokens", "input_tokens": 10**12 - 1}
    poison = settings.landing_dir / "zz-poison.jsonl"
    poison.write_text("".join(json.dumps(e) + "\n" for e in (spoof, zero_clock, overflow, most)))

    outcome = run_build(settings)

    assert outcome.success, "\n".join(outcome.lines)
    assert _rows(settings.warehouse_path, "select count(*) from raw.events") == [
        (summary.events + 1,)
    ]
    assert _rows(
        settings.warehouse_path,
        "select count(distinct event_id) from marts.fct_usage_lines where event_id = 'most-tokens'",
    ) == [(1,)]
    assert _rows(
        settings.warehouse_path,
        "select source_file, line_number, reason, detail, event_id from raw.quarantine "
        "order by line_number",
    ) == [
        (
            str(poison),
            1,
            "session_tenant_conflict",
            _rows(
                settings.warehouse_path,
                "select 'the session belongs to another tenant, first seen in file ' || file_id "
                f"|| ' line ' || line_number from raw.session_tenants "
                f"where session_id = '{victim['session_id']}'",
            )[0][0],
            "poison-tenant",
        ),
        (str(poison), 2, "bad_value", "occurred_at", "poison-year-1"),
        (str(poison), 3, "bad_value", "input_tokens", "poison-tokens"),
    ]
    published = _rows(
        settings.published_path,
        "select session_id, tenant_id from marts.fct_session_ledger order by 1",
    )
    assert len(published) == summary.sessions
    assert (victim["session_id"], tenants[0]) in published
    assert {s for s, _ in published}.isdisjoint({"poison-session"})
    assert [t for s, t in published if s == victim["session_id"]] == [tenants[0]]


def test_poison_an_older_ingest_accepted_stops_the_build_by_name_until_recover(
    tmp_path: Path,
) -> None:
    """A warehouse from before the rules holds a session under a second tenant (ingested while
    the session rule did not exist) and an event of year 1 (appended by hand, in no landing
    file): the build stops on a message naming each event and `ledger recover`, which removes
    them (the first is quarantined by the ingest, the second is in no landing file)."""
    from ledger.commands.build import run_build
    from ledger.ingest import ingest_paths
    from ledger.ingest.recover import recover
    from ledger.warehouse import append_events, connect

    settings, summary, victim, spoof = _simulated_day(tmp_path)
    ingest_paths(settings, [settings.landing_dir])
    # As the ingest before the session rule: it knew no session's tenant.
    with connect(settings.warehouse_path) as con:
        con.execute("delete from raw.session_tenants")
    poison = settings.landing_dir / "zz-poison.jsonl"
    poison.write_text(json.dumps(spoof) + "\n")
    [result] = ingest_paths(settings, [poison])
    assert (result.accepted, result.quarantined) == (1, 0)
    zero_clock = {
        **{k: v for k, v in victim.items() if k not in ("occurred_at", "event_id", "session_id")},
        "event_id": "poison-year-1",
        "session_id": "poison-session",
        "occurred_at": datetime(1, 1, 1),
    }
    with connect(settings.warehouse_path) as con:
        append_events(con, [zero_clock])

    outcome = run_build(settings)

    assert not outcome.success
    assert (
        "2 accepted events break rules the ingest applies now: "
        f"session_tenant_conflict: source {spoof['source']}, event poison-tenant, {poison} line 1; "
        f"occurred_at before 2000-01-01: source {victim['source']}, event poison-year-1, "
        "no landing file line ?. Run `ledger recover`: it ingests the landing files again under "
        "these rules, which quarantine them; then `ledger build`."
    ) in "\n".join(outcome.lines)

    recover(settings)
    outcome = run_build(settings)

    assert outcome.success, "\n".join(outcome.lines)
    assert _rows(settings.warehouse_path, "select count(*) from raw.events") == [(summary.events,)]
    assert _rows(
        settings.warehouse_path,
        "select source_file, line_number, reason, event_id from raw.quarantine",
    ) == [(str(poison), 1, "session_tenant_conflict", "poison-tenant")]
