"""`ledger backup DEST` and `ledger restore SRC` (SPEC 14): what cannot be rebuilt, consistent.

A backup holds what no build can make again:

| in the backup            | from the home                                             |
|--------------------------|-----------------------------------------------------------|
| `warehouse.duckdb`       | the schemas `raw` (manifests, quarantine, event keys, session tenants), `ops` (alerts sent, deliveries, reviews reported, restatements, the build's state) and `imports` (provider bills), each table with its own DDL, and the sequences |
| `raw/`                   | the raw layer's Parquet files the manifest `raw.event_files` names |
| `reference/`             | the reference data in effect (`LEDGER_REFERENCE_DIR`)      |
| `reports/`               | the weekly reviews, the archive of every version sent among them |
| `alerts/`, `access.yaml` | the alert file sink, the boards' access file (when present) |
| `BACKUP.json`            | when, from where, and the counts a restore checks         |

The marts, the published copy and the reference tables are left out: `ledger build` after a
restore makes them again from the above (the marts are missing, so it is a full refresh). The
collector's credentials file and every secret stay out of backups: they live in the
environment or a secret file (SPEC 12).

Both hold the home's run lock throughout: no ingest, build or publish changes the warehouse
half-way through a backup, and nothing runs on a home while it is restored.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from ledger.core.home_lock import home_lock
from ledger.core.settings import Settings
from ledger.core.sql import literal
from ledger.warehouse import connect, ensure_raw_schema, raw_root

# The schemas of the warehouse that no build writes: copied table by table.
KEPT_SCHEMAS = ("raw", "ops", "imports")
MANIFEST = "BACKUP.json"
FORMAT = 1


class BackupError(RuntimeError):
    """A backup or restore that cannot go ahead; one line saying why."""


@dataclass(frozen=True)
class BackupSummary:
    path: Path
    tables: int
    event_files: int
    events: int

    def line(self, verb: str) -> str:
        return (
            f"{verb} {self.path}: {self.tables} tables, {self.event_files} raw event files "
            f"({self.events:,} events)"
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
        summary = BackupSummary(dest, tables, len(files), int(events))
        manifest = {
            "format": FORMAT,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "home": str(settings.home),
            "tables": tables,
            "event_files": len(files),
            "events": int(events),
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
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{source}: backup format {manifest.get('format')!r} is not {FORMAT}")
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
            ]
        )
    return BackupSummary(settings.home, tables, files, int(events))
