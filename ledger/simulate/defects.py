"""The imperfections of real delivery: exact duplicates and bad rows.

Both work on the sorted key frame of the events: one narrow row per event with `_day` and `_src`
(its file; rows of a file are contiguous) and (`_type`, `_row`), which payload row it writes. Every
original row gets an ordering key `_key` (its position x 4) and `_seq` 0; an inserted row takes a
key just after the row it follows, so one sort puts everything in place.

- A duplicate is the same row again: a resend a few events later in the same file or, for some, at
  the start of the same source's file of the next day (a redelivery after a reconnect).
- A bad row (JSON Lines only) is a corrupted copy of a usage row with a fresh `event_id`, so it is
  never a duplicate of, or an id conflict with, its original: malformed JSON, an unknown field
  (`transcript`, the free text the contract forbids), a missing field, a wrong type or a negative
  value. Each one fails contract validation.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from ledger.simulate.generator import random_uuids
from ledger.simulate.layout import INTEGER_FIELDS
from ledger.simulate.scenario import SOURCES

BAD_ROW_KINDS: tuple[str, ...] = (
    "malformed_json",
    "unknown_field",
    "missing_field",
    "bad_type",
    "negative_value",
)
_LEAKED_TRANSCRIPTS: tuple[str, ...] = (
    "我想查一下这个月的账单",
    "帮我转人工",
    "can you read my last message again",
    "嗯，好的，谢谢",
)
_REMOVABLE_FIELDS: tuple[str, ...] = ("session_id", "tenant_id", "occurred_at")
# Types whose rows carry integers to corrupt; the session bookends and infra rows are left alone.
_CORRUPTIBLE_TYPES: tuple[str, ...] = tuple(
    event_type for event_type, fields in INTEGER_FIELDS.items() if fields
)


def with_order_keys(keys: pl.DataFrame) -> pl.DataFrame:
    return keys.with_columns(
        _key=pl.int_range(pl.len(), dtype=pl.Int64) * 4, _seq=pl.lit(0, dtype=pl.Int64)
    )


def in_file_order(keys: pl.DataFrame) -> pl.DataFrame:
    return keys.sort("_key", "_seq", maintain_order=True)


def add_duplicates(
    keys: pl.DataFrame, rng: np.random.Generator, share: float
) -> tuple[pl.DataFrame, int]:
    """Append round(share x rows) exact duplicates of distinct original rows."""
    rows = keys.height
    count = min(round(rows * share), rows)
    if count == 0:
        return keys, 0
    file_code = (keys["_day"].to_numpy() * len(SOURCES) + keys["_src"].to_numpy()).astype(np.int64)
    order = keys["_key"].to_numpy()
    chosen = np.sort(rng.choice(rows, size=count, replace=False))
    late = rng.random(count) < 0.3
    step = rng.integers(1, 50, size=count)

    next_code = file_code[chosen] + len(SOURCES)
    next_start = np.searchsorted(file_code, next_code, side="left")
    has_next = next_start < rows
    has_next[has_next] = file_code[next_start[has_next]] == next_code[has_next]
    redelivered = late & has_next
    last_in_file = np.searchsorted(file_code, file_code[chosen], side="right") - 1
    resent_after = np.minimum(chosen + step, last_in_file)
    target_key = (
        np.where(redelivered, order[np.minimum(next_start, rows - 1)], order[resent_after]) + 1
    )

    copies = keys[chosen].with_columns(
        _day=pl.Series(
            np.where(redelivered, keys["_day"].to_numpy()[chosen] + 1, keys["_day"][chosen])
        ).cast(keys.schema["_day"]),
        _key=pl.Series(target_key, dtype=pl.Int64),
        _seq=pl.Series(np.arange(1, count + 1), dtype=pl.Int64),
    )
    return pl.concat([keys, copies], how="vertical"), count


def _corrupt(line: str, kind: str, event_id: str, rng: np.random.Generator) -> str:
    record = json.loads(line)
    record["event_id"] = event_id
    if kind == "unknown_field":
        record["transcript"] = _LEAKED_TRANSCRIPTS[int(rng.integers(len(_LEAKED_TRANSCRIPTS)))]
    elif kind == "missing_field":
        del record[_REMOVABLE_FIELDS[int(rng.integers(len(_REMOVABLE_FIELDS)))]]
    elif kind in ("bad_type", "negative_value"):
        fields = INTEGER_FIELDS[record["event_type"]]
        field = fields[int(rng.integers(len(fields)))]
        # A number sent as a string is refused (contract integers are strict JSON integers).
        record[field] = str(record[field]) if kind == "bad_type" else -(record[field] + 1)
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    if kind == "malformed_json":
        # A write cut short: no prefix of a JSON object is a JSON object.
        text = text[: int(rng.integers(len(text) // 3, len(text) - 1))]
    return text


def add_bad_rows(
    keys: pl.DataFrame,
    rng: np.random.Generator,
    share: float,
    lines: list[pl.Series],
    type_names: tuple[str, ...],
) -> tuple[pl.DataFrame, pl.Series, int]:
    """Add round(share x original rows) bad rows, each right after the row it was made from.

    `keys` rows point at their JSON text with (`_type`, `_row`): `lines[_type][_row]`, and
    `type_names[_type]` is the event type. The bad rows' texts are returned as a new payload: their
    keys point at it with `_type` = len(type_names).
    """
    originals = keys.filter(pl.col("_seq") == 0)
    count = round(originals.height * share)
    corruptible = [index for index, name in enumerate(type_names) if name in _CORRUPTIBLE_TYPES]
    candidates = np.flatnonzero(originals["_type"].is_in(corruptible).to_numpy())
    count = min(count, len(candidates))
    if count == 0:
        return keys, pl.Series("_line", [], dtype=pl.String), 0
    chosen = np.sort(rng.choice(candidates, size=count, replace=False))
    kinds = rng.integers(0, len(BAD_ROW_KINDS), size=count)
    fresh_ids = random_uuids(rng, count).to_list()
    sources = originals[chosen]
    texts = [
        _corrupt(lines[type_index][row], BAD_ROW_KINDS[kind], event_id, rng)
        for type_index, row, kind, event_id in zip(
            sources["_type"].to_list(),
            sources["_row"].to_list(),
            kinds.tolist(),
            fresh_ids,
            strict=True,
        )
    ]
    bad = sources.with_columns(
        _type=pl.lit(len(type_names), dtype=sources.schema["_type"]),
        _row=pl.int_range(pl.len(), dtype=sources.schema["_row"]),
        _key=pl.col("_key") + 2,
        _seq=pl.lit(0, dtype=pl.Int64),
    )
    return pl.concat([keys, bad], how="vertical"), pl.Series("_line", texts, pl.String), count
