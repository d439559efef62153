"""Committing landing files to the warehouse: deduplicate, insert, each file all or nothing.

A file arrives validated (`ledger.ingest.stage`: every line with its verdict and typed values) and
commits in its own DuckDB transaction, in path order:
1. valid lines are deduplicated on (`source`, `event_id`) against everything ever ingested and
   against earlier lines of the same file: the same payload is a duplicate (counted, dropped), a
   different payload is quarantined as `id_conflict` and the first version stays;
2. accepted events go to `raw.events`, broken lines and conflicts to `raw.quarantine` with their raw
   text, file and line, and the file goes to the manifest `raw.ingested_files`.
A crash anywhere before the commit leaves nothing of the file visible; the manifest's content hash
makes ingesting the same file again a no-op.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ledger.contract.fields import LINEAGE_COLUMNS, raw_event_columns
from ledger.ingest.stage import StagedFile, Validator
from ledger.warehouse import KEY_HASH, land_events

# The quarantine reason of a file that cannot be read at all (one row, no line number).
UNREADABLE_FILE = "unreadable_file"
_LINEAGE = {name for name, _ in LINEAGE_COLUMNS}
CONTRACT_COLUMNS = [name for name, _ in raw_event_columns() if name not in _LINEAGE]


@dataclass
class FileResult:
    path: Path
    status: str  # ingested | already_ingested
    content_sha256: str
    rows: int = 0
    accepted: int = 0
    duplicates: int = 0
    quarantined: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    detail: str | None = None  # why an unreadable file could not be read

    def summary_line(self) -> str:
        if self.status == "already_ingested":
            return f"{self.path}: already ingested (same content), nothing changed"
        if UNREADABLE_FILE in self.reasons:
            return (
                f"{self.path}: unreadable, quarantined as a whole ({UNREADABLE_FILE}: "
                f"{self.detail}); skipped until its content changes"
            )
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.reasons.items()))
        quarantine = f" ({reasons})" if reasons else ""
        rate = self.rows / self.seconds if self.seconds else 0
        return (
            f"{self.path}: {self.rows} rows, {self.accepted} accepted, "
            f"{self.duplicates} duplicates, {self.quarantined} quarantined{quarantine} "
            f"in {self.seconds:.2f}s ({rate:,.0f} rows/s)"
        )


def already_ingested(con: duckdb.DuckDBPyConnection, sha256: str) -> bool:
    [(found,)] = con.execute(
        "select count(*) from raw.ingested_files where content_sha256 = ?", [sha256]
    ).fetchall()
    return found > 0


def load_file(
    con: duckdb.DuckDBPyConnection, path: Path, *, ingest_time: datetime | None = None
) -> FileResult:
    """Validate and ingest one file atomically. `con` must not be inside a transaction."""
    with Validator() as validator:
        [staged] = validator.validate([path], ingest_time=ingest_time)
    return commit_staged(con, staged)


def commit_staged(con: duckdb.DuckDBPyConnection, staged: StagedFile) -> FileResult:
    """Deduplicate and insert a validated file in one transaction, with its manifest row."""
    started = time.perf_counter()
    path, sha256 = staged.path, staged.sha256
    if staged.already_ingested or already_ingested(con, sha256):
        return FileResult(path, "already_ingested", sha256)
    naive_now = staged.ingest_time.astimezone(UTC).replace(tzinfo=None)
    if staged.unreadable is not None:
        return _commit_unreadable(con, staged, naive_now, started)

    con.execute("begin transaction")
    written: list[Path] = []
    try:
        [(file_id,)] = con.execute("select nextval('raw.file_id_seq')").fetchall()
        counts = _commit_rows(con, staged.rows, file_id, path, naive_now, written)
        result = _finish(con, staged, file_id, counts, naive_now, started)
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        for orphan in written:  # never committed: not part of raw.events
            orphan.unlink(missing_ok=True)
        raise
    return result


def commit_chunked(
    con: duckdb.DuckDBPyConnection, staged: StagedFile, chunks: Iterator[tuple[Path, int]]
) -> FileResult:
    """Validate and commit a large file chunk by chunk, still in ONE transaction.

    `chunks` yields (a piece of the file as a landing file of its own, the number of lines before
    it). Each piece is validated, deduplicated (against everything committed and the earlier
    pieces, whose keys are already in raw.event_keys in this transaction) and landed, so memory
    holds one piece at a time. A piece that cannot be read makes the whole file unreadable.
    """
    from ledger.ingest.stage import NOT_ABOUT_THE_FILE, READ_ERRORS, Validator, unreadable_reason

    started = time.perf_counter()
    path, sha256 = staged.path, staged.sha256
    if already_ingested(con, sha256):
        return FileResult(path, "already_ingested", sha256)
    naive_now = staged.ingest_time.astimezone(UTC).replace(tzinfo=None)
    con.execute("begin transaction")
    written: list[Path] = []
    unreadable = None
    try:
        [(file_id,)] = con.execute("select nextval('raw.file_id_seq')").fetchall()
        counts: dict[str, int] = {}
        with Validator() as validator:
            while True:
                try:
                    piece = next(chunks, None)
                    if piece is None:
                        break
                    chunk, offset = piece
                    [part] = validator.validate(
                        [chunk], ingest_time=staged.ingest_time, defer_large=False
                    )
                except READ_ERRORS as exc:
                    if isinstance(exc, NOT_ABOUT_THE_FILE):
                        raise
                    unreadable = unreadable_reason(exc)
                    break
                if part.unreadable is not None:
                    unreadable = part.unreadable
                    break
                rows = part.rows.set_column(
                    part.rows.schema.get_field_index("line_number"),
                    "line_number",
                    pc.add(part.rows["line_number"], offset),
                )
                for key, count in _commit_rows(
                    con, rows, file_id, path, naive_now, written
                ).items():
                    counts[key] = counts.get(key, 0) + count
        if unreadable is None:
            result = _finish(con, staged, file_id, counts, naive_now, started)
            con.execute("commit")
            return result
        raise _Unreadable
    except BaseException as exc:
        con.execute("rollback")
        for orphan in written:
            orphan.unlink(missing_ok=True)
        if not isinstance(exc, _Unreadable):
            raise
    return _commit_unreadable(con, replace(staged, unreadable=unreadable), naive_now, started)


class _Unreadable(Exception):
    """A piece of a chunked file could not be read: roll back, then quarantine the file whole."""


def _commit_rows(
    con: duckdb.DuckDBPyConnection,
    rows: pa.Table,
    file_id: int,
    path: Path,
    naive_now: datetime,
    written: list[Path],
) -> dict[str, int]:
    """Deduplicate and land validated rows of one file (all of it or one piece) inside the
    caller's transaction; Parquet files written are appended to `written`. Returns the count of
    each outcome: accepted, duplicate, and each quarantine reason."""
    # The SQL reads `staged` through DuckDB's replacement scan of this local variable, not
    # `con.register`: a registered table is a view in the catalog, and inside the file's
    # transaction a dropped view (and the Arrow rows it holds) lives until the commit, which a
    # large file's pieces must not.
    staged = rows
    # Found from whichever frame issues the statement (a wrapper around `con` included).
    con.execute("set python_scan_all_frames = true")

    def run(sql: str, params: dict | None = None) -> list[tuple]:
        assert staged is rows  # `staged` is in this frame's scope for the replacement scan
        return con.execute(sql, params).fetchall()

    try:
        con.execute(_FATES_SQL)
        staged_columns = ", ".join(f"s.{c}" for c in CONTRACT_COLUMNS)
        # `fates` holds only the valid lines that are not accepted (few), so every other valid line
        # goes in without a join against the whole file.
        # A subquery, not a table: a table created (even dropped) inside the file's transaction
        # keeps its rows in memory until the commit, which a large file's pieces must not.
        stamp = naive_now.isoformat(sep=" ")
        accepted = f"""(
            select {staged_columns}, s.payload_hash, {KEY_HASH} as key_hash,
                   {int(file_id)}::bigint as file_id, s.line_number,
                   timestamp '{stamp}' as ingested_at
            from staged s
            where s.quarantine_reason is null
              and s.line_number not in (select line_number from fates)
        )"""
        written += land_events(con, accepted, file_id=file_id, committed_at=naive_now, run=run)
        con.execute(
            """
            insert into raw.quarantine
            with quarantined as (
              select s.line_number, coalesce(s.quarantine_reason, f.fate) as reason,
                     coalesce(s.quarantine_detail, f.detail) as detail, s.raw_text
              from staged s left join (select * from fates where fate = 'id_conflict') f
                using (line_number)
              where s.quarantine_reason is not null or f.fate is not null
            )
            select $file_id, $path, line_number, reason, detail, raw_text,
                   case when reason <> 'malformed_json'
                        then json_extract_string(raw_text, '$.source') end,
                   case when reason <> 'malformed_json'
                        then json_extract_string(raw_text, '$.event_id') end,
                   $now
            from quarantined
            order by line_number
            """,
            {"file_id": file_id, "path": str(path), "now": naive_now},
        )
        counts = dict(
            con.execute(
                """
                select coalesce(quarantine_reason, 'accepted') as outcome, count(*)
                from staged group by all
                """
            ).fetchall()
        )
        for fate, count in con.execute("select fate, count(*) from fates group by all").fetchall():
            counts["accepted"] -= count
            counts[fate] = counts.get(fate, 0) + count
        return counts
    finally:
        con.execute("drop table if exists fates")


def _finish(
    con: duckdb.DuckDBPyConnection,
    staged: StagedFile,
    file_id: int,
    counts: dict[str, int],
    naive_now: datetime,
    started: float,
) -> FileResult:
    """The manifest row of an ingested file (inside its transaction) and its result."""
    path = staged.path
    counts = dict(counts)
    accepted = counts.pop("accepted", 0)
    duplicates = counts.pop("duplicate", 0)
    rows = accepted + duplicates + sum(counts.values())
    quarantined = sum(counts.values())
    seconds = staged.seconds + time.perf_counter() - started
    con.execute(
        "insert into raw.ingested_files values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            file_id,
            str(path),
            staged.sha256,
            path.stat().st_size,
            rows,
            accepted,
            duplicates,
            quarantined,
            naive_now,
            int(seconds * 1000),
        ],
    )
    return FileResult(
        path,
        "ingested",
        staged.sha256,
        rows=rows,
        accepted=accepted,
        duplicates=duplicates,
        quarantined=quarantined,
        reasons=counts,
        seconds=seconds,
    )


def _commit_unreadable(
    con: duckdb.DuckDBPyConnection, staged: StagedFile, naive_now: datetime, started: float
) -> FileResult:
    """A file that cannot be read at all: one quarantine row for the whole file (no line, no raw
    text) and its manifest row, so later runs skip it until its content changes."""
    path, sha256 = staged.path, staged.sha256
    seconds = staged.seconds + time.perf_counter() - started
    con.execute("begin transaction")
    try:
        [(file_id,)] = con.execute("select nextval('raw.file_id_seq')").fetchall()
        con.execute(
            "insert into raw.quarantine (file_id, source_file, reason, detail, quarantined_at) "
            "values (?, ?, ?, ?, ?)",
            [file_id, str(path), UNREADABLE_FILE, staged.unreadable, naive_now],
        )
        con.execute(
            "insert into raw.ingested_files values (?, ?, ?, ?, 0, 0, 0, 1, ?, ?)",
            [file_id, str(path), sha256, path.stat().st_size, naive_now, int(seconds * 1000)],
        )
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return FileResult(
        path,
        "ingested",
        sha256,
        quarantined=1,
        reasons={UNREADABLE_FILE: 1},
        seconds=seconds,
        detail=staged.unreadable,
    )


# Fate of each valid staged line that is not simply accepted: an earlier ingest wins over this file;
# within the file the first line wins. Same payload hash -> duplicate; different -> id_conflict (the
# first version stays). Only keys seen before or repeated in the file can have such a fate.
_FATES_SQL = f"""
create or replace temp table fates as
with valid as (
  select line_number, source, event_id, payload_hash
  from staged
  where quarantine_reason is null
),
firsts as (
  select source, event_id, min(line_number) as first_line,
         arg_min(payload_hash, line_number) as first_hash
  from valid
  group by all
  having count(*) > 1
),
-- Kept events whose key hash matches one of the file's keys: only the key_hash column is read for
-- every kept event, the strings only for these few rows (materialized, so it stays a step of its own).
hash_matches as materialized (
  select source, event_id, payload_hash, file_id, line_number
  from raw.event_keys
  where key_hash in (select {KEY_HASH} from valid)
),
earlier as (
  select e.source, e.event_id, any_value(e.payload_hash) as payload_hash,
         any_value(e.file_id) as file_id, any_value(e.line_number) as line_number
  from hash_matches e
  semi join valid v on e.source = v.source and e.event_id = v.event_id
  group by all
),
candidates as (
  select v.*, x.payload_hash as earlier_hash, x.file_id as earlier_file,
         x.line_number as earlier_line, r.first_line, r.first_hash
  from valid v
  left join earlier x on x.source = v.source and x.event_id = v.event_id
  left join firsts r on r.source = v.source and r.event_id = v.event_id
  where x.payload_hash is not null or (r.first_line is not null and v.line_number > r.first_line)
)
select
  line_number,
  case
    when earlier_hash = payload_hash then 'duplicate'
    when earlier_hash is not null then 'id_conflict'
    when payload_hash = first_hash then 'duplicate'
    else 'id_conflict'
  end as fate,
  case
    when earlier_hash is not null
      then 'differs from the version kept from file ' || earlier_file || ' line ' || earlier_line
    else 'differs from the version kept from line ' || first_line
  end as detail
from candidates
"""
