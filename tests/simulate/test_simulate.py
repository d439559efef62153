"""The simulator: reproducible, contract-valid landing files with known defects and the anomaly."""

from __future__ import annotations

import inspect
import json
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pydantic
import pytest

from ledger.contract.events import EVENT_ADAPTER, SEGMENTS
from ledger.simulate import SimulationSummary, simulate
from ledger.simulate.scenario import (
    ANOMALY_DAY_OFFSETS,
    ANOMALY_TENANT,
    PRICE_CHANGE_DATE,
    SOURCES,
)

SMALL = {"tenants": 5, "days": 3, "sessions_per_day": 3}


def _lines(summary: SimulationSummary) -> list[tuple[Path, str]]:
    return [(path, line) for path in summary.files for line in path.read_text().splitlines()]


def _valid_events(summary: SimulationSummary) -> list[dict]:
    """The distinct contract-valid events of a JSON Lines run, as parsed JSON objects."""
    seen: set[tuple[str, str]] = set()
    events = []
    for _, line in _lines(summary):
        try:
            event = EVENT_ADAPTER.validate_json(line)
        except pydantic.ValidationError:
            continue
        if (event.source, event.event_id) not in seen:
            seen.add((event.source, event.event_id))
            events.append(json.loads(line))
    return events


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> SimulationSummary:
    out = tmp_path_factory.mktemp("small")
    return simulate(out, **SMALL, bad_row_share=0.01, duplicate_share=0.01)


@pytest.fixture(scope="module")
def small_events(small_run: SimulationSummary) -> pl.DataFrame:
    return pl.from_dicts(_valid_events(small_run), infer_schema_length=None)


def test_same_arguments_write_byte_identical_files(tmp_path: Path) -> None:
    for fmt in ("jsonl", "parquet"):
        first = simulate(tmp_path / f"a-{fmt}", **SMALL, fmt=fmt)
        second = simulate(tmp_path / f"b-{fmt}", **SMALL, fmt=fmt)
        names = [path.relative_to(tmp_path / f"a-{fmt}") for path in first.files]
        assert names == [path.relative_to(tmp_path / f"b-{fmt}") for path in second.files]
        for left, right in zip(first.files, second.files, strict=True):
            assert left.read_bytes() == right.read_bytes()


def test_another_seed_writes_other_events(tmp_path: Path) -> None:
    first = simulate(tmp_path / "a", **SMALL, seed=7)
    other = simulate(tmp_path / "b", **SMALL, seed=8)
    assert first.files[0].read_bytes() != other.files[0].read_bytes()


def test_every_line_but_the_bad_rows_validates_against_the_contract(
    small_run: SimulationSummary,
) -> None:
    invalid = 0
    keys: Counter[tuple[str, str]] = Counter()
    for _, line in _lines(small_run):
        try:
            event = EVENT_ADAPTER.validate_json(line)
        except pydantic.ValidationError:
            invalid += 1
            continue
        keys[(event.source, event.event_id)] += 1
    assert invalid == small_run.bad_rows
    assert small_run.bad_rows == round(0.01 * small_run.events)
    assert sum(count - 1 for count in keys.values()) == small_run.duplicates
    assert small_run.duplicates == round(0.01 * small_run.events)
    assert len(keys) == small_run.events
    assert len(_lines(small_run)) == small_run.lines


def test_bad_rows_cover_every_kind_of_contract_violation(small_run: SimulationSummary) -> None:
    kinds: Counter[str] = Counter()
    for _, line in _lines(small_run):
        try:
            EVENT_ADAPTER.validate_json(line)
        except pydantic.ValidationError as error:
            kinds.update({detail["type"] for detail in error.errors()})
    assert set(kinds) == {
        "json_invalid",
        "extra_forbidden",
        "missing",
        "int_type",
        "greater_than_equal",
    }


def test_duplicates_repeat_a_line_byte_for_byte_in_the_same_source(
    small_run: SimulationSummary,
) -> None:
    by_key: dict[tuple[str, str], list[tuple[Path, str]]] = {}
    for path, line in _lines(small_run):
        try:
            event = EVENT_ADAPTER.validate_json(line)
        except pydantic.ValidationError:
            continue
        by_key.setdefault((event.source, event.event_id), []).append((path, line))
    repeated = [copies for copies in by_key.values() if len(copies) > 1]
    assert sum(len(copies) - 1 for copies in repeated) == small_run.duplicates
    for copies in repeated:
        assert len({line for _, line in copies}) == 1
        assert len({path.name for path, _ in copies}) == 1  # same source file name


def test_files_are_one_per_day_and_source_and_no_temporary_is_left(
    small_run: SimulationSummary,
) -> None:
    root = small_run.files[0].parent.parent
    days = {(date(2026, 11, 1) + timedelta(days=offset)).isoformat() for offset in range(3)}
    assert {path.parent.name for path in small_run.files} == days
    assert {path.stem for path in small_run.files} == set(SOURCES)
    assert {path.suffix for path in small_run.files} == {".jsonl"}
    # (day, source) pairs with no traffic get no file; the rest get exactly one.
    assert len(set(small_run.files)) == len(small_run.files) == 8
    assert sorted(root.rglob("*")) == sorted([*small_run.files, *(root / day for day in days)])


def test_every_session_has_usage_and_turns_carry_the_five_segments(
    small_events: pl.DataFrame,
) -> None:
    counts = small_events.group_by("event_type").len()
    assert set(counts["event_type"]) >= {
        "session.started",
        "session.ended",
        "asr.usage",
        "llm.usage",
        "tts.usage",
        "realtime.usage",
        "vision.usage",
        "infra.usage",
        "turn.latency",
        "turn.interrupted",
    }
    latency = small_events.filter(pl.col("event_type") == "turn.latency")
    per_turn = latency.group_by("session_id", "turn_index").agg(pl.col("segment").n_unique())
    assert per_turn["segment"].max() == len(SEGMENTS)
    assert (per_turn["segment"] == len(SEGMENTS)).mean() > 0.9
    assert latency.filter(pl.col("ended_at") < pl.col("started_at")).height == 0
    assert latency["started_at"].str.ends_with("Z").all()


def test_llm_usage_follows_phase_routing_with_exclusive_buckets(
    small_events: pl.DataFrame,
) -> None:
    llm = small_events.filter(pl.col("event_type") == "llm.usage")
    routes = dict(llm.group_by("phase").agg(pl.col("route").unique()).iter_rows())
    assert {phase: sorted(route) for phase, route in routes.items()} == {
        "greeting": ["small"],
        "intake": ["small"],
        "substantive": ["large"],
        "closing": ["small"],
    }
    # Most input is served by the prefix cache on a normal day.
    share = llm["cached_input_tokens"].sum() / (
        llm["cached_input_tokens"].sum() + llm["input_tokens"].sum()
    )
    assert share > 0.6


def test_interruption_waste_never_exceeds_the_turns_usage(small_events: pl.DataFrame) -> None:
    interrupted = small_events.filter(pl.col("event_type") == "turn.interrupted").select(
        "session_id", "turn_index", "wasted_output_tokens", "wasted_tts_characters"
    )
    tts = small_events.filter(pl.col("event_type") == "tts.usage").select(
        "session_id", "turn_index", "characters"
    )
    llm = small_events.filter(pl.col("event_type") == "llm.usage").select(
        "session_id", "turn_index", "output_tokens"
    )
    joined = interrupted.join(tts, on=["session_id", "turn_index"], how="inner").join(
        llm, on=["session_id", "turn_index"], how="left"
    )
    assert joined.height > 0
    assert (joined["wasted_tts_characters"] <= joined["characters"]).all()
    priced = joined.filter(pl.col("output_tokens").is_not_null())
    assert (priced["wasted_output_tokens"] <= priced["output_tokens"]).all()
    # Some interruptions land in a turn without LLM usage (the ledger's fallback rule).
    assert interrupted.join(llm, on=["session_id", "turn_index"], how="anti").height > 0


def test_sessions_are_bounded_by_their_start_and_end(small_events: pl.DataFrame) -> None:
    timed = small_events.with_columns(
        at=pl.col("occurred_at").str.to_datetime(time_zone="UTC", time_unit="ms")
    )
    bounds = (
        timed.group_by("session_id")
        .agg(
            start=pl.col("at").filter(pl.col("event_type") == "session.started").first(),
            end=pl.col("at").filter(pl.col("event_type") == "session.ended").first(),
            first=pl.col("at").min(),
            last=pl.col("at").max(),
        )
        .drop_nulls()
    )
    assert bounds.height > 0
    assert (bounds["first"] == bounds["start"]).all()
    assert (bounds["last"] == bounds["end"]).all()
    seconds = (bounds["end"] - bounds["start"]).dt.total_seconds()
    assert seconds.min() >= 20
    assert seconds.quantile(0.5) < 600


def test_traffic_is_quiet_at_night_and_busy_in_the_shanghai_daytime(tmp_path: Path) -> None:
    summary = simulate(tmp_path, tenants=2, days=7, sessions_per_day=30, bad_row_share=0.0)
    started = pl.from_dicts(
        [e for e in _valid_events(summary) if e["event_type"] == "session.started"]
    )
    hours = (
        started["occurred_at"]
        .str.to_datetime(time_zone="UTC")
        .dt.convert_time_zone("Asia/Shanghai")
        .dt.hour()
    )
    night = int(hours.is_between(0, 5).sum())
    day = int(hours.is_between(9, 17).sum())
    assert day > 10 * night


def test_bright_bank_prefix_cache_breaks_on_the_anomaly_days(tmp_path: Path) -> None:
    start = date(2027, 3, 1)  # the anomaly is placed relative to the start, any start
    summary = simulate(
        tmp_path, tenants=2, days=23, start=start, sessions_per_day=2, bad_row_share=0.0
    )
    llm = pl.from_dicts(
        [e for e in _valid_events(summary) if e["event_type"] == "llm.usage"]
    ).filter(pl.col("tenant_id") == ANOMALY_TENANT)
    llm = llm.with_columns(
        day=pl.col("occurred_at")
        .str.to_datetime(time_zone="UTC")
        .dt.convert_time_zone("Asia/Shanghai")
        .dt.date()
    )
    anomaly_days = [start + timedelta(days=offset) for offset in ANOMALY_DAY_OFFSETS]
    assert anomaly_days == [date(2027, 3, 20), date(2027, 3, 21)]

    def cached_share(frame: pl.DataFrame) -> float:
        cached = frame["cached_input_tokens"].sum()
        return cached / (cached + frame["input_tokens"].sum())

    broken = llm.filter(pl.col("day").is_in(anomaly_days))
    normal = llm.filter(~pl.col("day").is_in(anomaly_days) & (pl.col("day") < anomaly_days[0]))
    assert broken.height > 0
    assert cached_share(broken) < 0.05
    assert cached_share(normal) > 0.6


def test_default_period_contains_the_price_change_and_the_anomaly() -> None:
    defaults = inspect.signature(simulate).parameters
    start, days = defaults["start"].default, defaults["days"].default
    assert start <= PRICE_CHANGE_DATE < start + timedelta(days=days)
    assert [start + timedelta(days=offset) for offset in ANOMALY_DAY_OFFSETS] == [
        date(2026, 11, 20),
        date(2026, 11, 21),
    ]


def test_parquet_and_jsonl_hold_the_same_events(tmp_path: Path) -> None:
    as_jsonl = simulate(tmp_path / "jsonl", **SMALL, fmt="jsonl")
    as_parquet = simulate(tmp_path / "parquet", **SMALL, fmt="parquet")
    assert as_parquet.bad_rows == 0
    assert as_parquet.duplicates == as_jsonl.duplicates
    assert (as_parquet.events, as_parquet.sessions) == (as_jsonl.events, as_jsonl.sessions)

    json_rows = []
    for _, line in _lines(as_jsonl):
        try:
            EVENT_ADAPTER.validate_json(line)
        except pydantic.ValidationError:
            continue
        json_rows.append(json.loads(line))
    parquet_rows = [
        {key: value for key, value in row.items() if value is not None}
        for path in as_parquet.files
        for row in pl.read_parquet(path).iter_rows(named=True)
    ]
    assert parquet_rows == json_rows
    for row in parquet_rows[:200]:
        EVENT_ADAPTER.validate_python(row)


def test_tenants_beyond_the_catalogue_are_numbered(tmp_path: Path) -> None:
    summary = simulate(tmp_path, tenants=6, days=1, sessions_per_day=4, bad_row_share=0.0)
    tenants = {event["tenant_id"] for event in _valid_events(summary)}
    assert "tenant-06" in tenants


def test_progress_reports_rows_written(tmp_path: Path) -> None:
    seen: list[int] = []
    summary = simulate(tmp_path, **SMALL, progress=seen.append)
    assert len(seen) == len(summary.files)
    assert seen == sorted(seen)
    assert seen[-1] == summary.lines


def test_an_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="fmt must be 'jsonl' or 'parquet'"):
        simulate(tmp_path, fmt="csv")  # type: ignore[arg-type]
