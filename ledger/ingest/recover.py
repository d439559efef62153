"""Recovery: rebuild the warehouse's raw layer from the landing files, then swap it in.

The landing files are the source of truth (SPEC section 3): a warehouse that cannot be read is
rebuilt from them into a new file, and only a complete rebuild replaces it. "The first version of a
key wins" must mean the same after recovery as before, so when the old manifest
(`raw.ingested_files`) can still be read, files are ingested in its order (by file id), each with
its original ingest time (which the future-timestamp rule and the quarantine retention depend on);
files it does not list follow in path order. With no readable manifest, path order is all there is.

The old file is kept beside the new one (`warehouse.duckdb.before-recover-<time>`, its Parquet
folder as `...before-recover-<time>.raw`), never deleted;
reference data, marts and everything else derived come back with the next `ledger build`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import groupby
from pathlib import Path

import duckdb

from ledger.core.home_lock import home_lock
from ledger.core.settings import Settings
from ledger.ingest.files import content_sha256, discover
from ledger.ingest.load import FileResult


@dataclass(frozen=True)
class ManifestEntry:
    path: str
    sha256: str
    ingested_at: datetime  # aware, UTC


@dataclass
class Recovery:
    manifest_order: bool  # the old manifest could be read and ordered the files
    results: list[FileResult] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # manifest files no longer found
    kept_old: Path | None = None  # where the old warehouse file now is


def read_manifest(warehouse: Path) -> list[ManifestEntry] | None:
    """The old manifest in ingest order, or None when it cannot be read."""
    if not warehouse.exists():
        return None
    try:
        with duckdb.connect(str(warehouse), read_only=True) as con:
            rows = con.execute(
                "select path, content_sha256, ingested_at from raw.ingested_files order by file_id"
            ).fetchall()
    except duckdb.Error as exc:
        if "lock" in str(exc).lower():
            raise RuntimeError(
                f"{warehouse} is in use by another process; stop it before `ledger recover`"
            ) from exc
        return None
    return [ManifestEntry(p, sha, at.replace(tzinfo=UTC)) for p, sha, at in rows]


def recovery_plan(
    landing: Path,
    manifest: list[ManifestEntry] | None,
    on_refused: Callable[[Path, str], None] | None = None,
) -> tuple[list[tuple[Path, datetime | None]], list[str]]:
    """(file, original ingest time or None) in the order to ingest them, and the manifest files
    that can no longer be found (by content)."""
    candidates = discover([landing], on_refused) if landing.exists() else []
    entries = manifest or []
    # Files ingested from outside the landing folder come back too, when they are still there.
    outside = [
        Path(e.path) for e in entries if Path(e.path).exists() and not _under(Path(e.path), landing)
    ]
    for path in outside:
        candidates += discover([path], on_refused)
    candidates = list(dict.fromkeys(candidates))
    rank: dict[str, tuple[int, datetime]] = {}
    for index, entry in enumerate(entries):
        rank.setdefault(entry.sha256, (index, entry.ingested_at))
    hashes = {path: content_sha256(path) for path in candidates}
    keyed = []
    for path in candidates:
        index, at = rank.get(hashes[path], (len(entries), None))
        keyed.append((index, str(path), path, at))
    keyed.sort(key=lambda item: (item[0], item[1]))
    found = set(hashes.values())
    missing = [e.path for e in entries if e.sha256 not in found]
    return [(path, at) for _, _, path, at in keyed], list(dict.fromkeys(missing))


def _under(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def recover(
    settings: Settings,
    *,
    now: datetime | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    on_refused: Callable[[Path, str], None] | None = None,
) -> Recovery:
    """Rebuild the raw layer from the landing folder into a new file and swap it in, holding the
    home's run lock (waiting for another run's end)."""
    with home_lock(settings.home, wait=True):
        return _recover(settings, now=now, on_file=on_file, on_refused=on_refused)


def _recover(
    settings: Settings,
    *,
    now: datetime | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    on_refused: Callable[[Path, str], None] | None = None,
) -> Recovery:
    """Rebuild the raw layer from the landing folder into a new file and swap it in."""
    from ledger.ingest import expire_quarantined_text, ingest_files
    from ledger.warehouse import connect, ensure_raw_schema, refresh_events_view

    now = now or datetime.now(UTC)
    warehouse = settings.warehouse_path
    manifest = read_manifest(warehouse)
    plan, missing = recovery_plan(settings.landing_dir, manifest, on_refused)
    recovery = Recovery(manifest_order=manifest is not None, missing=missing)

    fresh = warehouse.with_name(warehouse.name + ".recovering")
    fresh_raw = fresh.with_name(fresh.name + ".raw")  # `raw_root` of the new file
    for leftover in (fresh, fresh.with_name(fresh.name + ".wal")):
        leftover.unlink(missing_ok=True)  # a recovery that died half-way
    shutil.rmtree(fresh_raw, ignore_errors=True)
    # Consecutive files with the same original ingest time go in as one run (batched validation).
    for at, group in groupby(plan, key=lambda item: item[1]):
        files = [path for path, _ in group]
        recovery.results += ingest_files(
            settings, files, ingest_time=at or now, on_file=on_file, warehouse_path=fresh
        )
    with connect(fresh) as con:
        ensure_raw_schema(con)
        expire_quarantined_text(con, settings.quarantine_retention_days, now)
        con.execute("checkpoint")

    # Swap: the old file is kept under a new name (a hard link, so the name `warehouse` never
    # points at nothing), its write-ahead log moves with it (it must not be replayed onto the new
    # file), and so does its Parquet folder; then the new file and its folder take their places.
    raw = warehouse.parent / "raw"
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = warehouse.with_name(f"{warehouse.name}.before-recover-{stamp}")
    if warehouse.exists():
        os.link(warehouse, kept)
        wal = warehouse.with_name(warehouse.name + ".wal")
        if wal.exists():
            os.replace(wal, kept.with_name(kept.name + ".wal"))
        recovery.kept_old = kept
    if raw.exists():
        os.replace(raw, kept.with_name(kept.name + ".raw"))
    if fresh_raw.exists():
        os.replace(fresh_raw, raw)
    os.replace(fresh, warehouse)
    # The view names its files by absolute path: point it at their new place.
    with connect(warehouse) as con:
        refresh_events_view(con)
        con.execute("checkpoint")
    return recovery
