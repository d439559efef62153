"""`ledger replay`: recorded sessions re-emitted as contract events (SPEC 11).

The sessions whose first event falls on a business date in [from, to] (reporting time zone) are read
from the warehouse's raw layer and written `scale` times as landing files (Parquet, the union layout
of the simulator), each copy with:
  - a new `session_id` and new `event_id`s, deterministic from the seed, the copy number and the
    original ids (the same seed gives byte-identical files);
  - the same `source` suffixed `-replay` (so a copy never meets an original in deduplication, and
    boards and reports can tell copies apart);
  - times moved by a fixed offset (`shift`), and compressed by `speed` around the start of the
    replayed window: new = window start + shift + (t - window start) / speed.
Every quantity is unchanged, so a copy at speed 1 costs what its original cost at the same rates.
All of it runs in DuckDB, in bulk.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import polars as pl

from ledger.contract.fields import all_fields
from ledger.core.durable import write_atomically
from ledger.core.settings import Settings
from ledger.core.sql import literal
from ledger.simulate.layout import UNION_SCHEMA
from ledger.warehouse import connect

REPLAY_SUFFIX = "-replay"
MAX_IDENTIFIER = 128
_TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


class ReplayError(ValueError):
    """A replay that cannot run as asked (nothing recorded, a name too long, files in the way)."""


@dataclass(frozen=True)
class ReplaySummary:
    sessions: int  # recorded sessions replayed
    copies: int  # sessions written (sessions x scale)
    events: int
    files: list[Path]


def _new_id(prefix: str, seed: int, *parts: str) -> str:
    """SQL: a 32-hex-digit id from the seed, the copy number and the original id."""
    joined = " || ':' || ".join(parts)
    return f"'{prefix}' || substr(sha256({seed}::varchar || ':' || copy_number || ':' || {joined}), 1, 32)"


def _shifted_us(column: str, start_us: int, shift_us: int, speed: float) -> str:
    """SQL: the replayed time of `column` in microseconds since the epoch."""
    us = f"epoch_us({column})"
    if speed == 1:
        return f"{us} + {shift_us}"
    return f"{start_us + shift_us} + cast(round(({us} - {start_us}) / {speed!r}) as bigint)"


def _shifted(column: str, start_us: int, shift_us: int, speed: float) -> str:
    moved = _shifted_us(column, start_us, shift_us, speed)
    return f"strftime(make_timestamp({moved}), '{_TIMESTAMP_FORMAT}')"


def replay(
    settings: Settings,
    out_dir: Path,
    *,
    date_from: date,
    date_to: date,
    tenant: str | None = None,
    scale: int = 1,
    speed: float = 1.0,
    shift: timedelta = timedelta(0),
    seed: int = 7,
) -> ReplaySummary:
    if scale < 1:
        raise ReplayError("--scale must be at least 1")
    if speed <= 0:
        raise ReplayError("--speed must be greater than 0")
    if date_to < date_from:
        raise ReplayError(f"--to {date_to} is before --from {date_from}")
    fields = all_fields()
    tz = literal(settings.timezone)
    tenant_filter = "" if tenant is None else f"and tenant_id = {literal(tenant)}"
    with connect(settings.warehouse_path, read_only=True) as con:
        con.execute(
            f"""
            create temp table replayed_sessions as
            select tenant_id, session_id
            from raw.events
            where true {tenant_filter}
            group by tenant_id, session_id
            having cast((min(occurred_at) at time zone 'UTC') at time zone {tz} as date)
                between {literal(date_from)} and {literal(date_to)}
            """
        )
        con.execute(
            """
            create temp table recorded as
            select events.*
            from raw.events as events
            join replayed_sessions using (tenant_id, session_id)
            """
        )
        [(sessions, start, longest_source)] = con.execute(
            "select (select count(*) from replayed_sessions), epoch_us(min(occurred_at)), "
            "max(length(source)) from recorded"
        ).fetchall()
        if not sessions:
            scope = f" of tenant {tenant}" if tenant else ""
            raise ReplayError(
                f"no recorded session{scope} starts between {date_from} and {date_to} "
                f"({settings.timezone}) in {settings.warehouse_path}"
            )
        if longest_source + len(REPLAY_SUFFIX) > MAX_IDENTIFIER:
            raise ReplayError(
                f"a source of {longest_source} characters cannot take the suffix {REPLAY_SUFFIX!r} "
                f"within the contract's {MAX_IDENTIFIER} characters"
            )
        shift_us = int(shift / timedelta(microseconds=1))
        columns = []
        for name, spec in fields.items():
            if name == "event_id":
                expression = _new_id("rp", seed, "source", "event_id")
            elif name == "session_id":
                expression = _new_id("rp-", seed, "tenant_id", "session_id")
            elif name == "source":
                expression = f"source || '{REPLAY_SUFFIX}'"
            elif spec.kind == "timestamp":
                expression = _shifted(name, start, shift_us, speed)
            elif spec.kind == "decimal":
                expression = f"cast({name} as varchar)"
            else:
                expression = name
            columns.append(f"{expression} as {name}")
        frame = pl.from_arrow(
            con.sql(
                f"""
            select
                strftime(make_timestamp({_shifted_us("occurred_at", start, shift_us, speed)}),
                    '%Y-%m-%d') as _day,
                event_type,
                {", ".join(columns)}
            from recorded
            cross join range(1, {scale + 1}) as copies (copy_number)
            order by _day, source, copy_number, occurred_at, event_id
            """
            ).to_arrow_table()
        )
    files = _write(frame, out_dir)
    return ReplaySummary(sessions, sessions * scale, frame.height, files)


def _write(frame: pl.DataFrame, out_dir: Path) -> list[Path]:
    """One Parquet file per (UTC day, source): `<out>/<day>/<source>.parquet`, written atomically;
    a file already there is never overwritten."""
    parts = frame.partition_by("_day", "source", maintain_order=True, as_dict=True)
    targets = {key: out_dir / str(key[0]) / f"{key[1]}.parquet" for key in parts}
    existing = [path for path in targets.values() if path.exists()]
    if existing:
        raise ReplayError(
            f"{existing[0]} already exists ({len(existing)} file(s) in the way): "
            "replay into an empty folder"
        )
    written = []
    for key, rows in parts.items():
        table = rows.select(
            pl.col(name).cast(dtype) if name in rows.columns else pl.lit(None, dtype).alias(name)
            for name, dtype in UNION_SCHEMA.items()
        )
        write_atomically(
            targets[key], lambda target, data=table: data.write_parquet(target), durable=False
        )
        written.append(targets[key])
    return written
