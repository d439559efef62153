"""`simulate`: a seeded, reproducible month of metering events written as landing files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl

from ledger.simulate.defects import add_bad_rows, add_duplicates, in_file_order, with_order_keys
from ledger.simulate.generator import KEY_COLUMNS, Period, finalise, generate
from ledger.simulate.layout import EVENT_FIELDS
from ledger.simulate.scenario import tenant_profiles
from ledger.simulate.writer import write_jsonl, write_parquet

# Per-tenant sessions a day at the default scale: about 200k events for 5 tenants over 30 days.
DEFAULT_SESSIONS_PER_DAY = 20


@dataclass(frozen=True)
class SimulationSummary:
    files: tuple[Path, ...]
    events: int  # distinct valid events (duplicates and bad rows not counted)
    sessions: int
    bad_rows: int
    duplicates: int

    @property
    def lines(self) -> int:
        """Rows written in all files: events + duplicates + bad rows."""
        return self.events + self.duplicates + self.bad_rows


def _check(name: str, value: float, low: float, high: float | None = None) -> None:
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")


def simulate(
    out_dir: Path,
    *,
    tenants: int = 5,
    days: int = 30,
    start: date = date(2026, 11, 1),
    seed: int = 7,
    sessions_per_day: int | None = None,
    fmt: Literal["jsonl", "parquet"] = "jsonl",
    bad_row_share: float = 0.001,
    duplicate_share: float = 0.002,
    progress: Callable[[int], None] | None = None,
    shadow: bool = False,
) -> SimulationSummary:
    """Write `days` days of events for the first `tenants` catalogue tenants under `out_dir`.

    `sessions_per_day` scales every tenant's volume (tenants weigh differently around it; the
    default gives a realistic month of ~200k events for 5 tenants; 500 gives ~5 million).
    Same arguments, same bytes. Bad rows are only written in JSON Lines (a Parquet file cannot hold
    malformed JSON); the events themselves do not depend on `fmt` or on the two shares.
    `progress` is called after each file with the number of rows written so far.
    `shadow` adds a shadow candidate's `turn.shadow` decisions (SPEC 11, ledger.simulate.shadow)
    from a stream of their own: the production events are the same without them (the duplicate
    and bad rows are drawn over all events, so those differ).
    """
    if fmt not in ("jsonl", "parquet"):
        raise ValueError(f"fmt must be 'jsonl' or 'parquet', got {fmt!r}")
    _check("tenants", tenants, 1)
    _check("days", days, 1)
    scale = DEFAULT_SESSIONS_PER_DAY if sessions_per_day is None else sessions_per_day
    _check("sessions_per_day", scale, 0)
    _check("bad_row_share", bad_row_share, 0.0, 1.0)
    _check("duplicate_share", duplicate_share, 0.0, 1.0)

    profiles = tenant_profiles(tenants)
    # Independent streams: changing the defect shares or the format never changes the traffic.
    traffic, ids, duplicates_rng, bad_rows_rng, shadow_rng = (
        np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(5)
    )
    generated = generate(
        Period(start, days, profiles, float(scale)), traffic, shadow_rng if shadow else None
    )
    session_count = generated.sessions

    # Events are ordered on a narrow key frame; each key row points at its payload row by
    # (`_type`, `_row`), so the wide columns are never sorted or copied as a whole.
    type_names: list[str] = []
    key_parts = []
    payloads: list[pl.DataFrame] = []
    for event_type, frame in finalise(generated, profiles, ids):
        key_parts.append(
            frame.select(
                pl.lit(len(type_names), dtype=pl.Int32).alias("_type"),
                pl.int_range(pl.len(), dtype=pl.Int64).alias("_row"),
                *KEY_COLUMNS,
            )
        )
        type_names.append(event_type)
        fields = EVENT_FIELDS[event_type]
        if fmt == "jsonl":
            payloads.append(frame.select(_line=pl.struct(*fields).struct.json_encode()))
        else:
            payloads.append(frame.select(fields))
    del generated
    if not key_parts:
        return SimulationSummary(files=(), events=0, sessions=0, bad_rows=0, duplicates=0)
    keys = pl.concat(key_parts).sort(*KEY_COLUMNS, maintain_order=True)
    keys = with_order_keys(keys).drop("_ts", "_sess", "_ord")
    event_count = keys.height
    keys, duplicate_count = add_duplicates(keys, duplicates_rng, duplicate_share)
    bad_count = 0
    if fmt == "jsonl":
        keys, bad_lines, bad_count = add_bad_rows(
            keys,
            bad_rows_rng,
            bad_row_share,
            [payload["_line"] for payload in payloads],
            tuple(type_names),
        )
        payloads.append(bad_lines.to_frame())
    keys = in_file_order(keys)

    writer = write_jsonl if fmt == "jsonl" else write_parquet
    files = writer(keys, payloads, Path(out_dir), start, progress)
    return SimulationSummary(
        files=tuple(files),
        events=event_count,
        sessions=session_count,
        bad_rows=bad_count,
        duplicates=duplicate_count,
    )
