"""`ledger backup DEST` and `ledger restore SRC` (SPEC 14): what cannot be rebuilt, consistent.

A backup holds what no build can make again:

| in the backup            | from the home                                             |
|--------------------------|-----------------------------------------------------------|
| `warehouse.duckdb`       | the schemas `raw` (manifests, quarantine, event keys, session tenants), `ops` (alerts sent, deliveries, reviews reported, restatements, the build's state) and `imports` (provider bills), each table with its own DDL, and the sequences |
| `raw/`                   | the raw layer's Parquet files the manifest `raw.event_files` names |
| `reference/`             | the reference data in effect (`LEDGER_REFERENCE_DIR`)      |
| `reports/`               | the weekly reviews, the archive of every version sent among them |
| `alerts/`, `access.yaml` | the alert file sink, the boards' access file (when present) |
| `landing/`               | every landing file: what the collector acknowledged and no ingest has read yet is only there (its `rejected/` batches too; never a writer's unfinished temporary) |
| `BACKUP.json`            | when, from where, the counts, and every file's size and SHA-256 |

The marts, the published copy and the reference tables are left out: `ledger build` after a
restore makes them again from the above (the marts are missing, so it is a full refresh). The
collector's credentials file and every secret stay out of backups: they live in the
environment or a secret file (SPEC 12).

Both hold the home's run lock throughout: no ingest, build or publish changes the warehouse
half-way through a backup, and nothing runs on a home while it is restored. The collector goes on
receiving meanwhile: every batch it acknowledged (`202`) before the backup started is in the
landing folder, so in the backup, and the ingest after a restore reads each file once (the raw
manifest knows the ones already in). A restore first checks every file against the manifest and
refuses, in one line and before writing anything, a backup that does not match it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from ledger.core.home_lock import home_lock
from ledger.core.landing import is_open_file
from ledger.core.settings import Settings
from ledger.core.sql import literal
from ledger.ingest.files import is_landing_file
from ledger.warehouse import connect, ensure_raw_schema, raw_root

# The schemas of the warehouse that no build writes: copied table by table.
KEPT_SCHEMAS = ("raw", "ops", "imports")
MANIFEST = "BACKUP.json"
# Format 2 lists every file with its checksum; a format 1 backup (without) is checked by its counts.
FORMAT = 2
READABLE_FORMATS = (1, 2)


class BackupError(RuntimeError):
    """A backup or restore that cannot go ahead; one line saying why."""


@dataclass(frozen=True)
class BackupSummary:
    path: Path
    tables: int
    event_files: int
    events: int
    landing_files: int = 0

    def line(self, verb: str) -> str:
        return (
            f"{verb} {self.path}: {self.tables} tables, {self.event_files} raw event files "
            f"({self.events:,} events), {self.landing_files} landing files"
        )


def _empty_folder(path: Path, what: str) -> None:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise BackupError(f"{path} is not an empty folder: {what} needs a new or empty one")


def _kept_tables(con: duckdb.DuckDBPyConnection, catalog: str) -> list[tuple[str, str, str]]:
    """(schema, table, create statement) of every base table of the kept schemas."""
    return con.execute(
        "select schema_name, table_name, sql from duckdb_tables() "
        "where database_name = ? and schema_name in ? order by schema_name, table_name",
        [catalog, list(KEPT_SCHEMAS)],
    ).fetchall()


def _kept_sequences(con: duckdb.DuckDBPyConnection, catalog: str) -> list[tuple[str, str, int]]:
    """(schema, sequence, next value) of the kept schemas' sequences."""
    rows = con.execute(
        "select schema_name, sequence_name, start_value, last_value, increment_by "
        "from duckdb_sequences() where database_name = ? and schema_name in ?",
        [catalog, list(KEPT_SCHEMAS)],
    ).fetchall()
    return [
        (schema, name, start if last is None else last + step)
        for schema, name, start, last, step in rows
    ]


def _copy_schemas(con: duckdb.DuckDBPyConnection, source: str, target: str) -> int:
    """Copy the kept schemas of catalog `source` into catalog `target` (both attached to `con`):
    each sequence with its next value, each table with its own DDL, then its rows."""
    for schema in KEPT_SCHEMAS:
        con.execute(f"create schema if not exists {target}.{schema}")
    for schema, name, following in _kept_sequences(con, source):
        con.execute(f"create or replace sequence {target}.{schema}.{name} start {following}")
    tables = _kept_tables(con, source)
    current = _catalog(con)
    con.execute(f"use {target}")
    try:
        for schema, table, create in tables:
            con.execute(f"drop table if exists {target}.{schema}.{table}")
            con.execute(create)  # the DDL names `schema.table`, resolved in the target catalog
            con.execute(
                f"insert into {target}.{schema}.{table} select * from {source}.{schema}.{table}"
            )
    finally:
        con.execute(f"use {current}")
    return len(tables)


def _copy_files(pairs: list[tuple[Path, Path]]) -> None:
    for source, target in pairs:
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _landing_files(landing: Path) -> list[Path]:
    """Every landing file under `landing`, relative to it: the ingest's (`rejected/` too) and a
    file sink's open file, never a writer's temporary (not acknowledged) nor a link."""
    if not landing.is_dir():
        return []
    return sorted(
        path.relative_to(landing)
        for path in landing.rglob("*")
        if not path.is_symlink() and (is_landing_file(path) or is_open_file(path))
    )


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _files_of(folder: Path) -> dict[str, Path]:
    """Every file under `folder` but the manifest, by its path relative to `folder`."""
    return {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != MANIFEST
    }


def _checksums(folder: Path) -> dict[str, dict[str, object]]:
    return {
        name: {"bytes": path.stat().st_size, "sha256": _sha256(path)}
        for name, path in _files_of(folder).items()
    }


def _mismatches(source: Path, listed: dict[str, dict[str, object]]) -> list[str]:
    """How the files in `source` differ from the manifest's list (empty: they match)."""
    found = _files_of(source)
    problems = []
    for name in sorted(set(listed) | set(found)):
        if name not in found:
            problems.append(f"{name} is missing")
        elif name not in listed:
            problems.append(f"{name} is not in its manifest")
        elif (found[name].stat().st_size, _sha256(found[name])) != (
            listed[name]["bytes"],
            listed[name]["sha256"],
        ):
            problems.append(f"{name} differs from its checksum")
    return problems


def backup(settings: Settings, dest: Path) -> BackupSummary:
    """Write the backup of `settings.home` into `dest` (a new or empty folder)."""
    dest = dest.resolve()
    _empty_folder(dest, "a backup")
    if not settings.warehouse_path.exists():
        raise BackupError(f"no warehouse at {settings.warehouse_path}: nothing to back up")
    with home_lock(settings.home, command="ledger backup"):
        dest.mkdir(parents=True, exist_ok=True)
        staged = dest / ".warehouse.duckdb.partial"
        with duckdb.connect() as con:
            con.execute(f"attach {literal(str(settings.warehouse_path))} as home (read_only)")
            con.execute(f"attach {literal(str(staged))} as backup")
            con.execute("use home")
            source_raw = raw_root(con)
            files = [p for (p,) in con.execute("select path from raw.event_files").fetchall()]
            (events,) = con.execute("select coalesce(sum(rows), 0) from raw.event_files").fetchone()
            tables = _copy_schemas(con, "home", "backup")
        staged.rename(dest / "warehouse.duckdb")
        _copy_files([(source_raw / path, dest / "raw" / path) for path in files])
        _copy_files(
            [
                (settings.reference_dir, dest / "reference"),
                (settings.reports_dir, dest / "reports"),
                (settings.alerts_dir, dest / "alerts"),
                (settings.access_path, dest / "access.yaml"),
            ]
        )
        # After the warehouse: a batch the ingest took in meanwhile is in both, read once.
        landing = _landing_files(settings.landing_dir)
        _copy_files([(settings.landing_dir / name, dest / "landing" / name) for name in landing])
        summary = BackupSummary(dest, tables, len(files), int(events), len(landing))
        manifest = {
            "format": FORMAT,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "home": str(settings.home),
            "tables": tables,
            "event_files": len(files),
            "events": int(events),
            "landing_files": len(landing),
            "files": _checksums(dest),
        }
        (dest / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return summary


def _catalog(con: duckdb.DuckDBPyConnection) -> str:
    return con.execute("select current_database()").fetchone()[0]


def restore(settings: Settings, source: Path) -> BackupSummary:
    """Restore the backup in `source` into `settings.home`, which must hold no warehouse.

    The reference data goes to `home/reference/` (point `LEDGER_REFERENCE_DIR` there); then
    `ledger build` rebuilds the marts and publishes.
    """
    source = source.resolve()
    try:
        manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackupError(f"{source} is not a ledger backup (no readable {MANIFEST})") from exc
    if manifest.get("format") not in READABLE_FORMATS:
        raise BackupError(f"{source}: backup format {manifest.get('format')!r} is not {FORMAT}")
    if "files" in manifest and (problems := _mismatches(source, manifest["files"])):
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise BackupError(
            f"{source} does not match its manifest: {problems[0]}{more}; nothing was restored"
        )
    if settings.warehouse_path.exists():
        raise BackupError(
            f"{settings.home} already has a warehouse: restore into a new home (LEDGER_HOME)"
        )
    with home_lock(settings.home, command="ledger restore"):
        with connect(settings.warehouse_path) as con:
            target = _catalog(con)
            con.execute(f"attach {literal(str(source / 'warehouse.duckdb'))} as backup (read_only)")
            tables = _copy_schemas(con, "backup", target)
            con.execute("detach backup")
            _copy_files([(source / "raw", raw_root(con))])
            # raw.events is a view over the manifest's files, named by absolute path: made here.
            ensure_raw_schema(con)
            files, events = con.execute(
                "select count(*), coalesce(sum(rows), 0) from raw.event_files"
            ).fetchone()
            (readable,) = con.execute("select count(*) from raw.events").fetchone()
        if (files, events, readable) != (manifest["event_files"], manifest["events"], events):
            raise BackupError(
                f"{source}: restored {files} event files and {readable:,} events, the backup "
                f"lists {manifest['event_files']} and {manifest['events']:,}"
            )
        _copy_files(
            [
                (source / "reference", settings.home / "reference"),
                (source / "reports", settings.reports_dir),
                (source / "alerts", settings.alerts_dir),
                (source / "access.yaml", settings.home / "access.yaml"),
                (source / "landing", settings.landing_dir),
            ]
        )
    landing = manifest.get("landing_files", 0)
    return BackupSummary(settings.home, tables, files, int(events), landing)
