"""Staging: landing files validated in bulk, away from the warehouse, ready to commit file by file.

A `Validator` owns an in-memory DuckDB of its own. It validates a batch of files in one statement
(`ledger.ingest.validation`, reading their numbered lines straight from the files); the result
leaves it as one Arrow table per file: every line's verdict, typed values and payload hash, and
the raw text of each line that breaks a rule. Validation is the larger share of the work; in a
database instance of its own it uses every core while the warehouse's single-threaded commits are
idle, instead of queueing behind them.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Container
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ledger.core.settings import DEFAULT_CLOCK_SKEW_MINUTES, DEFAULT_MAX_LINE_BYTES
from ledger.ingest.files import (
    JSONL_SUFFIXES,
    PARQUET_SUFFIXES,
    LongLine,
    content_sha256,
    decoded_lines,
    is_large,
    lines_relation,
    numbered_lines,
    parquet_rows,
    parquet_text_sql,
)
from ledger.ingest.validation import TypedRows, validation_sql
from ledger.warehouse.connection import bound_memory


@dataclass(frozen=True)
class StagedFile:
    path: Path
    sha256: str
    ingest_time: datetime
    seconds: float  # its share of the batch's validation time
    # Every line: file_index, line_number, quarantine_reason, quarantine_detail, the contract
    # columns, payload_hash and raw_text (NULL for a valid line). None when the file was already
    # ingested.
    rows: pa.Table | None
    # Why the file as a whole cannot be read (a truncated or fake gzip, a file that is not
    # Parquet); it is then quarantined whole as `unreadable_file` and `rows` is empty. (A line
    # too long is quarantined by itself, `line_too_long`, and the rest of its file read.)
    unreadable: str | None = None
    # A large file: not validated here but a piece at a time as it commits (`commit_chunked`).
    chunked: bool = False
    # The clock skew setting it was (or is to be) validated with (SPEC 3).
    clock_skew_minutes: int = DEFAULT_CLOCK_SKEW_MINUTES
    # The line limit it was validated with (its pieces are validated with it too).
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    @property
    def already_ingested(self) -> bool:
        return self.rows is None and not self.chunked


class Validator:
    """Validates batches of landing files in an in-memory DuckDB of its own; a line longer than
    `max_line_bytes` is quarantined by itself as `line_too_long`."""

    def __init__(
        self,
        memory_limit: str | None = None,
        spill_folder: Path | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        *,
        clock_skew_minutes: int = DEFAULT_CLOCK_SKEW_MINUTES,
    ) -> None:
        self.max_line_bytes = max_line_bytes
        self._clock_skew_minutes = clock_skew_minutes
        self._con = duckdb.connect()
        # Timestamps come out as naive UTC; the session zone must not shift the casts.
        self._con.execute("set TimeZone = 'UTC'")
        if memory_limit is not None and spill_folder is not None:
            bound_memory(self._con, memory_limit, spill_folder)

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Validator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lines(self, path: Path) -> str:
        return lines_relation(self._con, path, self.max_line_bytes)

    def _refused(self, files: list[tuple[int, Path]]) -> set[int]:
        """The JSON Lines files of `files` that DuckDB's text reader refuses."""
        refused = set()
        for index, path in files:
            if path.name.endswith(JSONL_SUFFIXES):
                try:
                    # (fetched: a result left pending would refuse the connection's next statement)
                    self._con.execute(f"select count(*) from {self._lines(path)}").fetchall()
                except TEXT_READER_REFUSALS:
                    refused.add(index)
        return refused

    def _validated(
        self, files: list[tuple[int, Path]], ingest_time: datetime, decode: set[int] = frozenset()
    ) -> pa.Table:
        """Every line of `files` validated in one statement (files in `decode` read by Python,
        their lines too long quarantined as `line_too_long`)."""
        if not files:
            return pa.table({"file_index": pa.array([], pa.int32())})
        con = self._con
        sources = []
        long_lines: dict[int, list[LongLine]] = {}
        # Parquet files are judged on their typed columns; only rows that need the ladder become
        # text.
        parquet = {index: path for index, path in files if path.name.endswith(PARQUET_SUFFIXES)}
        typed = [
            TypedRows(rows, columns, parquet_text_sql(columns))
            for rows, columns in parquet_rows(con, parquet)
        ]
        for index, path in files:
            if index in parquet:
                continue
            if index in decode:
                decoded, long_lines[index] = decoded_lines(path, self.max_line_bytes)
                con.register(f"decoded_{index}", decoded)
                source = f"decoded_{index}"
            else:
                source = self._lines(path)
            # The files' numbered lines, read straight into the validation (no copy in between).
            sources.append(f"select {index} as file_index, line_number, raw_text from {source}")
        if not sources:  # no text at all: an empty relation of the lines' shape
            sources.append(
                "select 0 as file_index, 0::bigint as line_number, null::varchar as raw_text where false"
            )
        lines = "(" + "\n  union all ".join(sources) + ")"
        try:
            rows = con.sql(
                validation_sql(
                    lines, typed=tuple(typed), clock_skew_minutes=self._clock_skew_minutes
                ),
                params={"ingest_time": ingest_time.isoformat()},
            ).to_arrow_table()
            rows = _too_long(rows, long_lines, self.max_line_bytes)
            # In file order, so that each file's rows are one slice of the result: sorted here on
            # the file index alone (DuckDB's ORDER BY moved every wide row through its sort).
            return rows.take(pc.sort_indices(rows["file_index"]))
        finally:
            for index in decode:
                con.unregister(f"decoded_{index}")

    def _validated_or_decoded(
        self, todo: list[tuple[int, Path]], ingest_time: datetime
    ) -> pa.Table:
        try:
            return self._validated(todo, ingest_time)
        except TEXT_READER_REFUSALS:
            # DuckDB's text reader refuses a whole file for one line it cannot read (not UTF-8,
            # or longer than the line limit): such files are read a line at a time in Python
            # instead (`decoded_lines`), so the bad line is quarantined by itself and the rest
            # is validated as usual.
            refused = self._refused(todo)
            if not refused:
                raise
            return self._validated(todo, ingest_time, decode=refused)

    def validate(
        self,
        paths: list[Path],
        *,
        ingest_time: datetime | None = None,
        already_ingested: Container[str] = (),
        defer_large: bool = True,
    ) -> list[StagedFile]:
        """Validate every line of `paths` in one statement; files whose content hash is in
        `already_ingested` are not read (the commit checks the manifest again). A large file
        alone (`is_large`) is not read either, unless `defer_large` is false: it comes back
        `chunked`, to be validated a piece at a time as it commits."""
        started = time.perf_counter()
        ingest_time = ingest_time or datetime.now(UTC)
        hashes = [content_sha256(path) for path in paths]
        if (
            defer_large
            and len(paths) == 1
            and is_large(paths[0])
            and hashes[0] not in already_ingested
        ):
            return [
                StagedFile(
                    paths[0],
                    hashes[0],
                    ingest_time,
                    0.0,
                    None,
                    chunked=True,
                    clock_skew_minutes=self._clock_skew_minutes,
                    max_line_bytes=self.max_line_bytes,
                )
            ]
        todo = [
            (index, path)
            for index, (path, sha256) in enumerate(zip(paths, hashes, strict=True))
            if sha256 not in already_ingested
        ]
        unreadable: dict[int, str] = {}
        try:
            rows = self._validated_or_decoded(todo, ingest_time)
        except READ_ERRORS:
            # One file the readers cannot open fails the whole statement: validate file by file,
            # so each unreadable file is set aside with its error and every other file goes in.
            parts = []
            for item in todo:
                try:
                    parts.append(self._validated_or_decoded([item], ingest_time))
                except READ_ERRORS as exc:
                    if isinstance(exc, NOT_ABOUT_THE_FILE):
                        raise
                    unreadable[item[0]] = unreadable_reason(exc)
            rows = _concat(parts)
        seconds = time.perf_counter() - started
        counts = pc.value_counts(rows["file_index"]).to_pylist() if rows.num_rows else []
        line_counts = {count["values"]: count["counts"] for count in counts}
        total = sum(line_counts.values()) or 1
        read = {index for index, _ in todo}
        staged, offset = [], 0
        for index, (path, sha256) in enumerate(zip(paths, hashes, strict=True)):
            count = line_counts.get(index, 0)
            file_rows = rows.slice(offset, count) if index in read else None
            share = seconds * count / total
            staged.append(
                StagedFile(
                    path,
                    sha256,
                    ingest_time,
                    share,
                    file_rows,
                    unreadable.get(index),
                    clock_skew_minutes=self._clock_skew_minutes,
                    max_line_bytes=self.max_line_bytes,
                )
            )
            offset += count
        return staged


def raw_lines(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    numbers: list[int],
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> dict[int, str]:
    """The raw text of lines `numbers` of one landing file, read as the validator reads them
    (`lines_relation`, or a line at a time in Python when DuckDB's text reader refuses the file);
    the lines asked for are valid, so none is over `max_line_bytes`."""
    listed = ", ".join(str(int(number)) for number in numbers)
    try:
        rows = con.execute(
            f"select line_number, raw_text from {lines_relation(con, path, max_line_bytes)} "
            f"where line_number in ({listed})"
        ).fetchall()
    except TEXT_READER_REFUSALS:
        if not path.name.endswith(JSONL_SUFFIXES):
            raise
        wanted = set(numbers)
        rows = [
            (number, line.decode("utf-8", errors="backslashreplace"))
            for number, line in numbered_lines(path, max_line_bytes)
            if number in wanted and isinstance(line, bytes)
        ]
    found = dict(rows)
    missing = [number for number in numbers if number not in found]
    if missing:
        raise RuntimeError(f"{path}: lines {missing[:5]} are no longer there")
    return found


# The quarantine reason of a line longer than the line limit (LEDGER_MAX_LINE_BYTES).
LINE_TOO_LONG = "line_too_long"

# What DuckDB's text reader raises for a file it will not read as lines: a line not UTF-8 or over
# `max_line_size` (InvalidInput), one many times longer than that (NotImplemented: "the Parallel
# CSV Reader currently does not support a full read on this file").
TEXT_READER_REFUSALS = (duckdb.InvalidInputException, duckdb.NotImplementedException)

# What reading a broken file raises: DuckDB's readers (not gzip, truncated, not Parquet), and
# Python's gzip/zlib for the files decoded here. Running out of memory or being interrupted says
# nothing about the file: those stop the run instead of quarantining it.
READ_ERRORS = (duckdb.Error, OSError, EOFError, zlib.error, pa.ArrowException)
NOT_ABOUT_THE_FILE = (duckdb.OutOfMemoryException, duckdb.InterruptException)

# Longest error message kept for an unreadable file (the reader's first lines say what is wrong).
UNREADABLE_DETAIL_CHARS = 500


def unreadable_reason(exc: BaseException) -> str:
    """One line saying why a file could not be read, e.g. `IOException: ... not a gzip file`."""
    # DuckDB appends the failing SQL after the first line: only the first line says what is wrong.
    message = " ".join(str(exc).strip().split("\n")[0].split()) or "no message"
    return f"{type(exc).__name__}: {message}"[:UNREADABLE_DETAIL_CHARS]


def _too_long(
    rows: pa.Table, long_lines: dict[int, list[LongLine]], max_line_bytes: int
) -> pa.Table:
    """`rows` with each line of `long_lines` (by file index) quarantined as `line_too_long`, its
    size in the detail and its first bytes as its raw text, whatever its first bytes were judged."""
    for index, lines in long_lines.items():
        if not lines:
            continue
        numbers = pa.array([line.line_number for line in lines], pa.int64())
        at = pc.index_in(rows["line_number"], value_set=numbers)
        mask = pc.and_kleene(pc.equal(rows["file_index"], index), pc.is_valid(at))
        mask = pc.fill_null(mask, False)
        replaced = {
            "quarantine_reason": pa.array([LINE_TOO_LONG] * len(lines)),
            "quarantine_detail": pa.array([line.detail(max_line_bytes) for line in lines]),
            "raw_text": pa.array([line.head for line in lines]),
            # not a valid line, whatever its first bytes say
            "payload_hash": pa.nulls(len(lines)),
        }
        for name, values in replaced.items():
            column = rows[name]
            value = pc.take(values, at).cast(column.type)
            rows = rows.set_column(
                rows.schema.get_field_index(name), name, pc.if_else(mask, value, column)
            )
    return rows


def _concat(parts: list[pa.Table]) -> pa.Table:
    if not parts:
        return pa.table({"file_index": pa.array([], pa.int32())})
    return pa.concat_tables(parts)
