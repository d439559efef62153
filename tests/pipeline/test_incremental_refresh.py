"""Incremental refresh (issue 11): a build recomputes only what new data touches, and the marts it
leaves are the marts a full rebuild makes, row for row.

One small traffic (2 tenants, 3 days, 3 sessions a day) is fed file by file with a `ledger build`
after each: late events of a week already reported, a session whose end arrives in the next
file, a session the missing_end watermark closes without new events, a duplicate and a conflict
across files, and a rate-card edit between builds. Three copies of simulated sessions, two weeks
earlier, pin the concurrency step function at week boundaries: one spans UTC midnight of a Sunday
and one local midnight (the business week's start), both in the first file, and the second file
brings a session on the Tuesday after, so that the second build recomputes that week only, with
the level the week-before sessions carry into its Monday. Then a copy of that warehouse is rebuilt
with `--full-refresh`; every table of schema marts, and every published mart, must be equal.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest

from ledger.commands.build import run_build
from ledger.core.settings import Settings
from ledger.pipeline import publish as publish_module
from ledger.pipeline.published_parts import OPS_TABLES
from ledger.serving.published_copy import open_published
from ledger.simulate import simulate
from ledger.warehouse import connect, copy_warehouse
from tests.support.homes import LEDGER_REFERENCE_DIR

pytestmark = pytest.mark.integration

# 2026-11-15 is a Sunday: day 1 is ISO week 46, days 2 and 3 are week 47.
START = date(2026, 11, 15)


def _events(root: Path) -> list[dict]:
    simulate(
        root,
        tenants=2,
        days=3,
        start=START,
        sessions_per_day=3,
        bad_row_share=0.0,
        duplicate_share=0.0,
    )
    return [
        json.loads(line)
        for path in sorted(root.rglob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]


_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _moved(rows: list[dict], name: str, middle: datetime) -> list[dict]:
    """A copy of a session (new session and event ids) whose time span is centred on `middle`."""
    times = [_parse(r["occurred_at"]) for r in rows]
    shift = middle - (min(times) + (max(times) - min(times)) / 2)

    def moved(value: object) -> object:
        if isinstance(value, str) and _TIMESTAMP.match(value):
            at = (_parse(value) + shift).astimezone(UTC)
            return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
        return value

    return [
        {
            **{k: moved(v) for k, v in r.items()},
            "session_id": name,
            "event_id": f"{name}-{r['event_id']}",
        }
        for r in rows
    ]


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _marts(con: duckdb.DuckDBPyConnection, kind: str = "BASE TABLE") -> dict[str, list[tuple]]:
    """Every mart, rows sorted; `kind` 'VIEW' for the published copy (views over Parquet)."""
    tables = [
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'marts' "
            "and table_type = ? order by 1",
            [kind],
        ).fetchall()
        # The alerts' and reviews' records published beside the marts are not dbt's.
        if name not in OPS_TABLES
    ]
    # dim_reference_meta.loaded_at is when each build loaded the reference files.
    return {
        t: con.execute(
            f"select * exclude (loaded_at) from marts.{t} order by all"
            if t == "dim_reference_meta"
            else f"select * from marts.{t} order by all"
        ).fetchall()
        for t in tables
    }


def _build(settings: Settings, *, full_refresh: bool = False) -> list[str]:
    outcome = run_build(settings, full_refresh=full_refresh)
    assert outcome.success, "\n".join(outcome.lines)
    return [line for line in outcome.lines if line.startswith("refresh:")]


def test_file_by_file_builds_equal_one_full_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every mart is published in ISO-week parts, so that a publish after an incremental build
    # summarises only the refreshed weeks' parts (the others must still be right at the end).
    monkeypatch.setattr(publish_module, "WHOLE_BELOW", 0)
    events = _events(tmp_path / "simulated")
    day = {e["event_id"]: e["occurred_at"][:10] for e in events}
    by_session: dict[str, list[dict]] = {}
    for event in events:
        by_session.setdefault(event["session_id"], []).append(event)
    # Day 1 is everything before 2026-11-15T16:00Z (midnight in Asia/Shanghai): week 46.
    week46 = [s for s, rows in by_session.items() if rows[0]["occurred_at"] < "2026-11-15T16"]
    week46.sort(key=lambda s: max(e["occurred_at"] for e in by_session[s]))
    late_end, late_usage, watermark = week46[0], week46[1], week46[-1]

    def ends(session: str) -> list[dict]:
        return [e for e in by_session[session] if e["event_type"] == "session.ended"]

    late_usage_events = [
        e for e in by_session[late_usage] if e["event_type"] in ("llm.usage", "tts.usage")
    ][-3:]
    held_back = {e["event_id"] for e in ends(late_end) + late_usage_events + ends(watermark)}
    first = [e for e in events if e["session_id"] in week46 and e["event_id"] not in held_back]
    second = [
        e for e in events if e["session_id"] not in week46 and day[e["event_id"]] <= "2026-11-16"
    ]
    third = [e for e in events if e["session_id"] not in week46 and e["event_id"] not in held_back]
    third = [e for e in third if e not in second]
    # Week-boundary sessions, copies of day-3 sessions of one tenant (2026-11-01 is a Sunday):
    # one across UTC midnight, one across local midnight (16:00 UTC), both in the first file; and
    # one on the Tuesday after, in the second file: the second build recomputes ISO week 45 only
    # (UTC dates 2 to 4 November), with the level carried into its Monday from week 44.
    tenant = third[0]["tenant_id"]
    models = sorted({e["session_id"] for e in third if e["tenant_id"] == tenant})
    utc_midnight = _moved(
        by_session[models[0]], "w-utc-midnight", datetime(2026, 11, 2, tzinfo=UTC)
    )
    local_midnight = _moved(
        by_session[models[-1]], "w-local-midnight", datetime(2026, 11, 1, 16, tzinfo=UTC)
    )
    tuesday = _moved(by_session[models[0]], "w-tuesday", datetime(2026, 11, 3, 10, tzinfo=UTC))
    for copy in (utc_midnight, local_midnight, tuesday):
        by_session[copy[0]["session_id"]] = copy
        day.update({e["event_id"]: e["occurred_at"][:10] for e in copy})
    assert {e["occurred_at"][:10] for e in utc_midnight} == {"2026-11-01", "2026-11-02"}
    assert min(e["occurred_at"] for e in local_midnight) < "2026-11-01T16"
    assert max(e["occurred_at"] for e in local_midnight) > "2026-11-01T16"
    # The conflict: an event of the first file again, with another payload (quarantined).
    conflict = {**first[5], "occurred_at": first[5]["occurred_at"][:-4] + "999Z"}

    reference = tmp_path / "reference"
    shutil.copytree(LEDGER_REFERENCE_DIR, reference)
    settings = Settings(home=tmp_path / "home", reference_dir=reference)
    settings.ensure_dirs()
    landing = settings.landing_dir

    _write(landing / "1.jsonl", [*first, *utc_midnight, *local_midnight])
    assert _build(settings) == [
        f"refresh: full (first build), {_parquet_files(settings)} raw files"
    ]
    with connect(settings.warehouse_path, read_only=True) as con:
        assert con.execute(
            "select is_open from marts.fct_session_ledger where session_id = ?", [watermark]
        ).fetchone() == (True,)
        boundary_hours = _boundary_hours(con, tenant)
    # Both sessions of week 44 reach the hours of business week 45, up to Monday 00:00 UTC's.
    assert {(h.day, h.hour) for h, _peak in boundary_hours} >= {(1, 16), (2, 0)}

    # The end of a week-46 session a file later, a duplicate and a conflict, day 2's traffic.
    _write(landing / "2.jsonl", [*ends(late_end), first[3], conflict, *second, *tuesday])
    files_before = _parquet_files(settings)
    lines = _build(settings)
    new_files = _parquet_files(settings) - files_before
    with connect(settings.warehouse_path, read_only=True) as con:
        reasons = dict(
            con.execute(
                "select session_id, string_agg(distinct reason, ',' order by reason) "
                "from ops.refresh_sessions group by all"
            ).fetchall()
        )
        assert con.execute(
            "select is_open, end_reason from marts.fct_session_ledger where session_id = ?",
            [watermark],
        ).fetchone() == (False, "missing_end")
        weeks = con.execute("select week_start from ops.refresh_weeks order by 1").fetchall()
    # Week 45 is refreshed, week 44 (where the boundary sessions start) is not.
    assert weeks == [(date(2026, 11, 2),), (date(2026, 11, 9),), (date(2026, 11, 16),)]
    # Recomputing week 45 kept the level the week-44 sessions carry into it (the Tuesday session
    # overlaps neither).
    with connect(settings.warehouse_path, read_only=True) as con:
        assert _boundary_hours(con, tenant) == boundary_hours
    # Only the sessions with new events and the one the watermark closed were recomputed.
    new_sessions = {e["session_id"] for e in [*ends(late_end), first[3], *second, *tuesday]}
    assert reasons == {
        **dict.fromkeys(new_sessions, "new_events"),
        watermark: "missing_end",
    }
    assert lines[0].startswith(
        f"refresh: incremental, {new_files} new raw files, {len(reasons)} sessions "
        f"(1 missing_end, {len(new_sessions)} new_events)"
    )

    # A rate-card edit: the deepseek input price that ends on 2026-11-16 goes up.
    rate_card = reference / "rate_card.csv"
    edited = rate_card.read_text().replace(
        "deepseek,deepseek-chat,llm.input_tokens,2.00,1000000,CNY,2025-01-01,2026-11-16",
        "deepseek,deepseek-chat,llm.input_tokens,2.40,1000000,CNY,2025-01-01,2026-11-16",
    )
    assert edited != rate_card.read_text()
    rate_card.write_text(edited)
    # With it, day 3 and late usage of a week-46 session (a week already reported).
    _write(landing / "3.jsonl", [*third, *late_usage_events])
    _build(settings)
    with connect(settings.warehouse_path, read_only=True) as con:
        restated = {
            s
            for (s,) in con.execute(
                "select session_id from ops.restated_sessions where reason = 'rate_card'"
            ).fetchall()
        }
    # Sessions with events up to the range's end date are restated; day-3-only sessions are not
    # (a session that also got new events counts as restated too).
    assert restated == {
        s for s, rows in by_session.items() if min(day[e["event_id"]] for e in rows) <= "2026-11-16"
    }
    assert restated

    rebuilt = Settings(home=tmp_path / "rebuilt", reference_dir=reference)
    rebuilt.ensure_dirs()
    copy_warehouse(settings.warehouse_path, rebuilt.warehouse_path)
    assert _build(rebuilt, full_refresh=True)[0].startswith("refresh: full (asked for)")

    with connect(settings.warehouse_path, read_only=True) as con:
        incremental = _marts(con)
        quarantined = con.execute("select reason from raw.quarantine").fetchall()
    # What the boards read is the same, though publishing summarised only the refreshed weeks'
    # parts of the incremental marts; publishing again finds nothing to write.
    with open_published(settings) as con:
        published = _marts(con, "VIEW")
    again = publish_module.publish(settings)
    assert (again.parts_written, again.parts_reused) == (
        0,
        len(publish_module.published_parts(settings.published_path)),
    )
    assert 0 < again.tables_summarised_whole < again.tables
    with connect(rebuilt.warehouse_path, read_only=True) as con:
        full = _marts(con)
    assert quarantined == [("id_conflict",)]
    assert sorted(incremental) == sorted(full) == sorted(published)
    for table, rows in full.items():
        assert incremental[table] == rows, table
        assert published[table] == rows, table
    assert len(full["fct_session_ledger"]) == len(by_session)


def _boundary_hours(con: duckdb.DuckDBPyConnection, tenant: str) -> list[tuple]:
    """The tenant's hourly peak concurrency before the Tuesday session (2026-11-03 UTC)."""
    return con.execute(
        "select hour_start_at, peak_concurrent_sessions from marts.fct_capacity_tenant_hourly "
        "where tenant_id = ? and hour_start_at < '2026-11-03' order by 1",
        [tenant],
    ).fetchall()


def _parquet_files(settings: Settings) -> int:
    with connect(settings.warehouse_path, read_only=True) as con:
        return con.execute("select count(*) from raw.event_files").fetchone()[0]
