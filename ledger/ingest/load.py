"""Committing landing files to the warehouse: deduplicate, insert, each file all or nothing.

A file arrives validated (`ledger.ingest.stage`: every line with its verdict and typed values) and
commits in path order, with the other small files validated with it in one DuckDB transaction (the
outcome is the one committing them one by one would have; a failure rolls the group back and the
files are committed one by one):
1. valid lines are deduplicated on (`source`, `event_id`) against everything ever ingested and
   against earlier lines of the same file: the same payload is a duplicate (counted, dropped), a
   different payload is quarantined as `id_conflict` and the first version stays; a line whose
   session already belongs to another tenant (earlier ingests, then earlier lines of the group:
   `raw.session_tenants`) is quarantined as `session_tenant_conflict`;
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

from ledger.contract.fields import LINEAGE_COLUMNS, raw_event_columns, redacted_sql
from ledger.core.settings import DEFAULT_MAX_LINE_BYTES
from ledger.core.sql import literal
from ledger.ingest.files import content_sha256
from ledger.ingest.stage import LINE_TOO_LONG, StagedFile, Validator, raw_lines
from ledger.warehouse import KEY_HASH, land_events
from ledger.warehouse.raw_layout import SESSION_HASH

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


# The details of files an earlier version quarantined whole as unreadable although they can be read
# (issue 39): a line far over DuckDB's text reader's limit (NotImplemented), and the files after a
# long line in its batch (the line left the validator's connection busy: ResourceInUse).
_WRONGLY_UNREADABLE_DETAILS = ("ResourceInUseException:%", "NotImplementedException:%")


def forget_wrongly_unreadable(con: duckdb.DuckDBPyConnection, files: list[Path]) -> list[Path]:
    """Of `files`, those an earlier version quarantined whole as unreadable for a reason that was
    not theirs, their content unchanged since: their manifest and quarantine rows are deleted (in
    one transaction), so that this run ingests them. Returns them."""
    rows = con.execute(
        f"""
        select f.file_id, f.path, f.content_sha256
        from raw.ingested_files f
        join raw.quarantine q using (file_id)
        where q.reason = {literal(UNREADABLE_FILE)}
          and list_contains(?::varchar[], f.path)
          and ({" or ".join(f"q.detail like {literal(d)}" for d in _WRONGLY_UNREADABLE_DETAILS)})
        """,
        [[str(path) for path in files]],
    ).fetchall()
    # A file changed since is new content: it goes in anyway, and the row stays with the old one.
    again = [
        (file_id, Path(path)) for file_id, path, sha in rows if content_sha256(Path(path)) == sha
    ]
    if again:
        ids = [file_id for file_id, _ in again]
        con.execute("begin transaction")
        try:
            con.execute(
                "delete from raw.quarantine where list_contains(?::bigint[], file_id)", [ids]
            )
            con.execute(
                "delete from raw.ingested_files where list_contains(?::bigint[], file_id)", [ids]
            )
            con.execute("commit")
        except BaseException:
            con.execute("rollback")
            raise
    return [path for _, path in again]


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
    [result] = commit_group(con, [staged])
    return result


def commit_group(con: duckdb.DuckDBPyConnection, group: list[StagedFile]) -> list[FileResult]:
    """Commit validated files (validated together, same ingest time) in ONE transaction, in order.

    The outcome is the one committing them one by one would have: each file's lines are
    deduplicated against everything committed before and against the files before it in the
    group (the first version wins; a conflict names the file and line it differs from), each file
    gets its own manifest row, quarantine rows and counts, and a file whose content an earlier
    one had is `already_ingested`. The group commits whole or not at all, so a file is never half
    in: on a failure the caller commits the files one by one (`ingest_files` does). The accepted
    events of the whole group are written as one Parquet file per date, the view is redefined
    once and the transaction commits once: the fixed cost of a commit is paid per group.
    """
    started = time.perf_counter()
    results: list[FileResult | None] = [None] * len(group)
    shas = sorted({s.sha256 for s in group if not s.already_ingested})
    committed = {
        sha
        for (sha,) in con.execute(
            "select content_sha256 from raw.ingested_files "
            "where list_contains(?::varchar[], content_sha256)",
            [shas],
        ).fetchall()
    }
    todo: list[int] = []
    for index, staged in enumerate(group):
        if staged.already_ingested or staged.sha256 in committed:
            results[index] = FileResult(staged.path, "already_ingested", staged.sha256)
        else:
            committed.add(staged.sha256)  # a later file of the group with the same content
            todo.append(index)
    if not todo:
        return [r for r in results if r is not None]
    naive_now = group[todo[0]].ingest_time.astimezone(UTC).replace(tzinfo=None)
    if any(group[i].ingest_time != group[todo[0]].ingest_time for i in todo):
        raise ValueError("a group of files commits with one ingest time")

    con.execute("begin transaction")
    written: list[Path] = []
    try:
        ids = sorted(
            file_id
            for (file_id,) in con.execute(
                "select nextval('raw.file_id_seq') from range(?)", [len(todo)]
            ).fetchall()
        )
        file_ids = dict(zip(todo, ids, strict=True))
        readable = [i for i in todo if group[i].unreadable is None]
        counts = _commit_rows(
            con,
            [
                _Lines(
                    group[i].rows,
                    file_ids[i],
                    group[i].path,
                    sha256=group[i].sha256,
                    max_line_bytes=group[i].max_line_bytes,
                )
                for i in readable
            ],
            naive_now,
            written,
        )
        share = (time.perf_counter() - started) / len(todo)
        for index in todo:
            staged, file_id = group[index], file_ids[index]
            if staged.unreadable is not None:
                results[index] = _insert_unreadable(con, staged, file_id, naive_now, share)
            else:
                results[index] = _finish(
                    con, staged, file_id, counts.get(file_id, {}), naive_now, share
                )
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        for orphan in written:  # never committed: not part of raw.events
            orphan.unlink(missing_ok=True)
        raise
    return [r for r in results if r is not None]


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
        with Validator(
            max_line_bytes=staged.max_line_bytes, clock_skew_minutes=staged.clock_skew_minutes
        ) as validator:
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
                piece = _Lines(
                    rows,
                    file_id,
                    path,
                    text=chunk,
                    offset=offset,
                    max_line_bytes=staged.max_line_bytes,
                )
                piece_counts = _commit_rows(con, [piece], naive_now, written, pieces=True)
                for key, count in piece_counts.get(file_id, {}).items():
                    counts[key] = counts.get(key, 0) + count
        if unreadable is None:
            result = _finish(con, staged, file_id, counts, naive_now, time.perf_counter() - started)
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


@dataclass(frozen=True)
class _Lines:
    """The validated rows of a landing file (or of one piece of one) and where they were read."""

    rows: pa.Table
    file_id: int
    path: Path  # the landing file
    # The file the rows were validated from (a piece of a large landing file, else `path`), the
    # lines before it in the landing file, and the content hash it was validated with (None for a
    # piece: a copy of our own).
    text: Path | None = None
    offset: int = 0
    sha256: str | None = None
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES  # the limit it was validated with


def _commit_rows(
    con: duckdb.DuckDBPyConnection,
    files: list[_Lines],
    naive_now: datetime,
    written: list[Path],
    *,
    pieces: bool = False,
) -> dict[int, dict[str, int]]:
    """Deduplicate and land the validated rows of `files` (in commit order; a whole file or one
    piece of one, `pieces`) inside the caller's transaction; Parquet files written are appended
    to `written`. Returns, per file id, the count of each outcome:
    accepted, duplicate, and each quarantine reason."""
    if not files:
        return {}
    # The SQL reads the validated rows through DuckDB's replacement scan of the local variable
    # `staged_rows`, not `con.register`: a registered table is a view in the catalog, and inside
    # the transaction a dropped view (and the Arrow rows it holds) lives until the commit, which a
    # large file's pieces must not. Each row's file id and place in the group (`seq`) are joined
    # on in SQL from a VALUES list: building Arrow arrays from Python values would make pyarrow
    # import pandas (about half a second) in a run that never uses it.
    staged_rows, group_files, staged = _staged_group(files)
    # Found from whichever frame issues the statement (a wrapper around `con` included).
    con.execute("set python_scan_all_frames = true")

    def run(sql: str, params: dict | None = None) -> list[tuple]:
        # `staged_rows` is in this frame's scope for the replacement scan
        assert staged_rows is not None
        return con.execute(sql, params).fetchall()

    try:
        con.execute(_FATES_SQL.replace("{staged}", staged))
        # A valid line a conflict (id or session) quarantines has no raw text in the validated rows (only a
        # broken line does): read again from its file (conflicts are few), joined on below through
        # the replacement scan of `conflict_texts`.
        conflicts = con.execute(
            "select file_id, line_number from fates where fate <> 'duplicate'"
        ).fetchall()
        conflict_texts = _conflict_texts(files, conflicts) if conflicts else None
        with_texts = (
            "left join conflict_texts c on f.fate is not null "
            "and c.file_id = s.file_id and c.line_number = s.line_number"
            if conflict_texts is not None
            else ""
        )
        staged_columns = ", ".join(f"s.{c}" for c in CONTRACT_COLUMNS)
        # `fates` holds only the valid lines that are not accepted (few), so every other valid line
        # goes in without a join against the whole group.
        # A subquery, not a table: a table created (even dropped) inside the transaction keeps its
        # rows in memory until the commit, which a large file's pieces must not.
        stamp = naive_now.isoformat(sep=" ")
        accepted = f"""(
            select {staged_columns}, s.payload_hash, {KEY_HASH} as key_hash,
                   s.file_id, s.line_number, timestamp '{stamp}' as ingested_at
            from {staged} s
            where s.quarantine_reason is null
              and s.seq not in (select seq from fates)
        )"""
        written += land_events(
            con,
            accepted,
            file_id=None,
            file_id_from_rows=True,
            committed_at=naive_now,
            run=run,
            # a piece's rows must not stay in memory until its file's transaction ends
            through_table=not pieces,
        )
        con.execute(_quarantine_sql(staged, group_files, with_texts), {"now": naive_now})
        return _outcome_counts(con, staged)
    finally:
        con.execute("drop table if exists fates")


def _staged_group(files: list[_Lines]) -> tuple[pa.Table, str, str]:
    """The group's validated rows as one Arrow table, and SQL for the group's files (index, id,
    position, path) and for its rows with their file id and place in the group (`seq`); the SQL
    names the table `staged_rows`, which the caller keeps in a local of that name."""
    staged_rows = pa.concat_tables([f.rows for f in files], promote_options="permissive")
    indexes = [f.rows["file_index"][0].as_py() for f in files if f.rows.num_rows]
    if len(set(indexes)) != len(indexes):
        raise ValueError("the files of a group are validated together (one file index each)")
    group_files = (
        "(select * from (values "
        + ", ".join(
            # file_id as raw.events types it (BIGINT): a VALUES integer would be an INTEGER, and
            # the raw layer's Parquet files must agree on each column's width (Spark reads one).
            f"({f.rows['file_index'][0].as_py() if f.rows.num_rows else -1}, {f.file_id}::bigint, "
            f"{position}, {literal(str(f.path))})"
            for position, f in enumerate(files)
        )
        + ") as g(file_index, file_id, position, path))"
    )
    staged = (
        f"(select r.*, g.file_id, "
        f"cast(r.line_number as bigint) + g.position * {_SEQ_FILE_STEP} as seq "
        f"from staged_rows r join {group_files} g using (file_index))"
    )
    return staged_rows, group_files, staged


def _quarantined_key(name: str) -> str:
    """SQL: a quarantined line's source or event id, typed when the line was valid, else as read."""
    return (
        f"case when q.valid then q.{name} "
        f"when q.reason not in ('malformed_json', {literal(LINE_TOO_LONG)}) "
        f"then json_extract_string(q.raw_text, '$.{name}') end"
    )


def _quarantine_sql(staged: str, group_files: str, with_texts: str) -> str:
    """The insert of the group's quarantined lines (the validator's reasons and the fates'
    id conflicts) into raw.quarantine, with `$now` as their time."""
    # A valid line's conflict (id or session) gives its source and event id as typed values.
    # The sample, source and event id are stored redacted: personal data (SPEC 3) stays out of
    # the quarantine too, whatever the line's reason.
    return f"""
            insert into raw.quarantine
            with quarantined as (
              select s.seq, s.file_id, s.line_number,
                     coalesce(s.quarantine_reason, f.fate) as reason,
                     coalesce(s.quarantine_detail, f.detail) as detail,
                     {"coalesce(s.raw_text, c.raw_text)" if with_texts else "s.raw_text"} as raw_text,
                     s.source, s.event_id, s.quarantine_reason is null as valid
              from {staged} s left join (select * from fates where fate <> 'duplicate') f
                using (seq)
              {with_texts}
              where s.quarantine_reason is not null or f.fate is not null
            )
            select q.file_id, g.path, q.line_number, q.reason, q.detail,
                   {redacted_sql("q.raw_text")},
                   {redacted_sql(_quarantined_key("source"))},
                   {redacted_sql(_quarantined_key("event_id"))},
                   $now
            from quarantined q join {group_files} g using (file_id)
            order by q.seq
            """


def _outcome_counts(con: duckdb.DuckDBPyConnection, staged: str) -> dict[int, dict[str, int]]:
    """Per file id, the count of each outcome: accepted, duplicate, each quarantine reason."""
    counts: dict[int, dict[str, int]] = {}
    for file_id, outcome, count in con.execute(
        "select file_id, coalesce(quarantine_reason, 'accepted'), count(*) "
        f"from {staged} group by all"
    ).fetchall():
        counts.setdefault(file_id, {})[outcome] = count
    for file_id, fate, count in con.execute(
        "select file_id, fate, count(*) from fates group by all"
    ).fetchall():
        mine = counts[file_id]
        mine["accepted"] -= count
        mine[fate] = mine.get(fate, 0) + count
    return counts


def _conflict_texts(files: list[_Lines], lines: list[tuple[int, int]]) -> pa.Table:
    """(file_id, line_number, raw_text) of each valid line in `lines` ((file id, line number)),
    read again from the file it was validated from, as the validator read it.

    On a connection of its own: a read error inside the warehouse's transaction would abort it.
    A landing file whose content is no longer the content validated stops the commit (the group
    rolls back; the next run ingests the file as it is then).
    """
    by_id = {f.file_id: f for f in files}
    wanted: dict[int, list[int]] = {}
    for file_id, line in lines:
        wanted.setdefault(file_id, []).append(line)
    found: dict[str, list] = {"file_id": [], "line_number": [], "raw_text": []}
    with duckdb.connect() as scratch:
        scratch.execute("set TimeZone = 'UTC'")
        for file_id, numbers in wanted.items():
            source = by_id[file_id]
            text = source.text or source.path
            if source.sha256 is not None and content_sha256(text) != source.sha256:
                raise RuntimeError(f"{source.path}: changed while it was being ingested")
            local = sorted(number - source.offset for number in numbers)
            texts = raw_lines(scratch, text, local, source.max_line_bytes)
            found["file_id"] += [file_id] * len(local)
            found["line_number"] += [n + source.offset for n in local]
            found["raw_text"] += [texts[n] for n in local]
    # (pyarrow imports pandas the first time it converts Python values: only when there are
    # conflicts)
    return pa.table(
        {
            "file_id": pa.array(found["file_id"], pa.int64()),
            "line_number": pa.array(found["line_number"], pa.int64()),
            "raw_text": pa.array(found["raw_text"], pa.string()),
        }
    )


# A line's place in a group: the file's position in the group, then its line number.
_SEQ_FILE_STEP = 2**40


def _finish(
    con: duckdb.DuckDBPyConnection,
    staged: StagedFile,
    file_id: int,
    counts: dict[str, int],
    naive_now: datetime,
    commit_seconds: float,
) -> FileResult:
    """The manifest row of an ingested file (inside its transaction) and its result."""
    path = staged.path
    counts = dict(counts)
    accepted = counts.pop("accepted", 0)
    duplicates = counts.pop("duplicate", 0)
    rows = accepted + duplicates + sum(counts.values())
    quarantined = sum(counts.values())
    seconds = staged.seconds + commit_seconds
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
    """A file that cannot be read at all, in a transaction of its own (`_insert_unreadable`)."""
    con.execute("begin transaction")
    try:
        [(file_id,)] = con.execute("select nextval('raw.file_id_seq')").fetchall()
        result = _insert_unreadable(con, staged, file_id, naive_now, time.perf_counter() - started)
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return result


def _insert_unreadable(
    con: duckdb.DuckDBPyConnection,
    staged: StagedFile,
    file_id: int,
    naive_now: datetime,
    commit_seconds: float,
) -> FileResult:
    """A file that cannot be read at all: one quarantine row for the whole file (no line, no raw
    text) and its manifest row, so later runs skip it until its content changes. Inside the
    caller's transaction."""
    path, sha256 = staged.path, staged.sha256
    seconds = staged.seconds + commit_seconds
    con.execute(
        "insert into raw.quarantine (file_id, source_file, reason, detail, quarantined_at) "
        "values (?, ?, ?, ?, ?)",
        [file_id, str(path), UNREADABLE_FILE, staged.unreadable, naive_now],
    )
    con.execute(
        "insert into raw.ingested_files values (?, ?, ?, ?, 0, 0, 0, 1, ?, ?)",
        [file_id, str(path), sha256, path.stat().st_size, naive_now, int(seconds * 1000)],
    )
    return FileResult(
        path,
        "ingested",
        sha256,
        quarantined=1,
        reasons={UNREADABLE_FILE: 1},
        seconds=seconds,
        detail=staged.unreadable,
    )


# Fate of each valid staged line that is not simply accepted: an earlier ingest wins over the
# group; within the group the first line wins (files in commit order, then lines). Same payload
# hash -> duplicate; different -> id_conflict (the first version stays). Only keys seen before or
# repeated in the group can have such a fate; then, of the lines kept, those whose session belongs
# to another tenant (`session_fates`).
_FATES_SQL = f"""
create or replace temp table fates as
with valid as (
  select seq, file_id, line_number, source, event_id, payload_hash, session_id, tenant_id
  from {{staged}}
  where quarantine_reason is null
),
firsts as (
  select source, event_id, min(seq) as first_seq, arg_min(file_id, seq) as first_file,
         arg_min(line_number, seq) as first_line, arg_min(payload_hash, seq) as first_hash
  from valid
  group by all
  having count(*) > 1
),
-- Kept events whose key hash matches one of the group's keys: only the key_hash column is read
-- for every kept event, the strings only for these few rows (materialized, so it stays a step of
-- its own).
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
         x.line_number as earlier_line, r.first_seq, r.first_file, r.first_line, r.first_hash
  from valid v
  left join earlier x on x.source = v.source and x.event_id = v.event_id
  left join firsts r on r.source = v.source and r.event_id = v.event_id
  where x.payload_hash is not null or (r.first_seq is not null and v.seq > r.first_seq)
),
key_fates as (
  select
    seq,
    file_id,
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
      when first_file = file_id
        then 'differs from the version kept from line ' || first_line
      else 'differs from the version kept from file ' || first_file || ' line ' || first_line
    end as detail
  from candidates
),
-- A session belongs to one tenant: the tenant of its first accepted event (earlier ingests first,
-- then the group in commit order). Of the lines the key rules keep, one of a session kept under
-- another tenant is `session_tenant_conflict` (the detail names where the session's tenant was
-- first seen, not the tenant: the quarantine is shown to people who may not see that tenant).
keepers as (
  select seq, file_id, line_number, session_id, tenant_id
  from valid
  where seq not in (select seq from key_fates)
),
session_matches as materialized (
  select session_id, tenant_id, file_id, line_number
  from raw.session_tenants
  where session_hash in (select {SESSION_HASH} from keepers)
),
kept_sessions as (
  select s.session_id, any_value(s.tenant_id) as tenant_id, any_value(s.file_id) as file_id,
         any_value(s.line_number) as line_number
  from session_matches s
  semi join keepers k on k.session_id = s.session_id
  group by all
),
group_sessions as (
  select session_id, arg_min(tenant_id, seq) as tenant_id, arg_min(file_id, seq) as file_id,
         arg_min(line_number, seq) as line_number
  from keepers
  group by all
  having count(distinct tenant_id) > 1
),
session_fates as (
  select
    k.seq,
    k.file_id,
    k.line_number,
    'session_tenant_conflict' as fate,
    'the session belongs to another tenant, first seen '
      || case
           -- (an earlier piece of the same large file is in the table already)
           when x.file_id = k.file_id then 'in line ' || x.line_number
           when x.session_id is not null
             then coalesce('in file ' || x.file_id || ' line ' || x.line_number, 'earlier')
           when g.file_id = k.file_id then 'in line ' || g.line_number
           else 'in file ' || g.file_id || ' line ' || g.line_number
         end as detail
  from keepers k
  left join kept_sessions x on x.session_id = k.session_id
  left join group_sessions g on g.session_id = k.session_id
  where coalesce(x.tenant_id, g.tenant_id) <> k.tenant_id
)
select * from key_fates
union all
select * from session_fates
"""
