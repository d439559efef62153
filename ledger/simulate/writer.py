"""Landing files: one per (day, source), written atomically.

A watcher polling the landing directory must never ingest half a file: each file is written under
a hidden temporary name in the same directory and renamed into place (a rename is atomic on one
filesystem). Names: `<out_dir>/<YYYY-MM-DD>/<source>.jsonl` (or `.parquet`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path

import polars as pl

from ledger.core.durable import write_atomically
from ledger.simulate.layout import UNION_SCHEMA
from ledger.simulate.scenario import SOURCES


def _files(
    keys: pl.DataFrame, payloads: list[pl.DataFrame], out_dir: Path, start: date, suffix: str
) -> Iterator[tuple[Path, pl.DataFrame]]:
    """Each file's path and rows, in file order, gathered from the payloads.

    `keys` lists the rows in file order (files contiguous): `_day`, `_src` and (`_type`, `_row`),
    the payload row to write, so the wide payloads are copied once, one file at a time.
    """
    for (day, source), part in keys.partition_by(
        "_day", "_src", maintain_order=True, as_dict=True
    ).items():
        pieces = [
            payloads[int(type_index)]
            .select(pl.all().gather(rows["_row"]))
            .with_columns(_pos=rows["_pos"])
            for (type_index,), rows in part.with_row_index("_pos")
            .partition_by("_type", maintain_order=True, as_dict=True)
            .items()
        ]
        rows = pl.concat(pieces, how="diagonal_relaxed").sort("_pos").drop("_pos")
        name = (start + timedelta(days=int(day))).isoformat()
        yield out_dir / name / f"{SOURCES[int(source)]}.{suffix}", rows


def write_jsonl(
    keys: pl.DataFrame,
    payloads: list[pl.DataFrame],
    out_dir: Path,
    start: date,
    progress: Callable[[int], None] | None = None,
) -> list[Path]:
    """Write JSON Lines files; each payload holds one column `_line`, the JSON text."""
    written: list[Path] = []
    lines = 0
    for path, rows in _files(keys, payloads, out_dir, start, "jsonl"):
        payload = ("\n".join(rows["_line"].to_list()) + "\n").encode("utf-8")
        # Atomic (a crash never leaves half a landing file) but not synced: simulated data is
        # cheaper to simulate again than to flush.
        write_atomically(path, lambda target, data=payload: target.write_bytes(data), durable=False)
        written.append(path)
        lines += rows.height
        if progress is not None:
            progress(lines)
    return written


def write_parquet(
    keys: pl.DataFrame,
    payloads: list[pl.DataFrame],
    out_dir: Path,
    start: date,
    progress: Callable[[int], None] | None = None,
) -> list[Path]:
    """Write Parquet files with the union of the contract's columns (payloads: contract fields)."""
    written: list[Path] = []
    count = 0
    for path, rows in _files(keys, payloads, out_dir, start, "parquet"):
        table = rows.select(
            pl.col(name).cast(dtype) if name in rows.columns else pl.lit(None, dtype).alias(name)
            for name, dtype in UNION_SCHEMA.items()
        )
        write_atomically(path, lambda target, data=table: data.write_parquet(target), durable=False)
        written.append(path)
        count += rows.height
        if progress is not None:
            progress(count)
    return written
