"""Landing files: which files count, their content hash, and how each becomes numbered lines."""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import duckdb
import pyarrow as pa

from ledger.contract.fields import all_fields
from ledger.core.landing import REJECTED_FOLDER, is_open_file, recover_abandoned
from ledger.core.settings import DEFAULT_MAX_LINE_BYTES
from ledger.core.sql import identifier, literal
from ledger.core.terminal import printable

log = logging.getLogger(__name__)

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
PARQUET_SUFFIXES = (".parquet",)


def is_landing_file(path: Path) -> bool:
    # Writers drop files in under a hidden temporary name and rename them when complete.
    if path.name.startswith(".") or path.is_symlink() or not path.is_file():
        return False
    return path.name.endswith(JSONL_SUFFIXES + PARQUET_SUFFIXES)


def _has_landing_suffix(path: Path) -> bool:
    return not path.name.startswith(".") and path.name.endswith(JSONL_SUFFIXES + PARQUET_SUFFIXES)


def discover(
    paths: list[Path],
    on_refused: Callable[[Path, str], None] | None = None,
    landing: Path | None = None,
) -> list[Path]:
    """Landing files under `paths` (files or folders, recursively), in a stable order.

    A symbolic link to a file is never followed, inside a folder or named directly, nor a link to
    a folder inside the folder searched, and nothing that resolves outside the folder searched is
    read: a link to a system file must not turn into quarantined rows. A file with more than one
    name (a hard link, maybe to a file outside the folder) is refused like a link. Given `landing`
    (as `ledger ingest` gives it), a path named that resolves outside it is refused too (SPEC 12).
    Each refused path is passed to `on_refused` with the reason (or logged). A folder named
    directly may be reached through a link (a mounted volume): it is searched at its real location.
    """
    refuse = on_refused or (lambda path, why: log.warning("%s: %s", printable(path), why))
    root = landing.resolve() if landing is not None else None
    found: list[Path] = []
    for path in paths:
        if path.is_symlink() and not path.is_dir():
            refuse(path, REFUSED_SYMLINK)
            continue
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or folder to ingest")
        if root is not None and not path.resolve().is_relative_to(root):
            refuse(path, f"{REFUSED_OUTSIDE} {landing}")
            continue
        if path.is_dir():
            found.extend(_walk(path, refuse))
        elif _has_landing_suffix(path):
            if _is_hard_link(path):
                refuse(path, REFUSED_HARDLINK)
                continue
            found.append(path.resolve())
        else:
            raise ValueError(
                f"{path}: not a landing file; expected one of "
                f"{', '.join(JSONL_SUFFIXES + PARQUET_SUFFIXES)}"
            )
    return list(dict.fromkeys(found))


REFUSED_SYMLINK = "refused: a symbolic link (landing files must be regular files)"
# REJECTED_FOLDER: batches the HTTP collector refused, kept by `HttpSink` for an operator to
# inspect: never ingested as part of a folder (name a file in it to ingest it).
REFUSED_OUTSIDE = "refused: resolves outside the landing folder"
REFUSED_HARDLINK = (
    "refused: a hard link (the file has another name, maybe outside the landing folder)"
)


def _is_hard_link(path: Path) -> bool:
    # Its other names cannot be found cheaply, so any second name is refused: the file may be a
    # system file linked into the landing folder, read through a name the folder's rules allow.
    return path.stat().st_nlink > 1


def _walk(folder: Path, refuse: Callable[[Path, str], None]) -> list[Path]:
    """Regular landing files under `folder`, sorted; links (to files or folders) are refused.

    The open files a dead FileSink left (`.<name>.jsonl.open`, no writer holds their lock) are made
    visible first and read like any file; a live writer's are left alone. Folders named
    `rejected` below `folder` are not searched.
    """
    root = folder.resolve()
    found: list[Path] = []
    # os.walk with followlinks=False never descends into a linked folder; a link is reported.
    for current, dirs, files in os.walk(root, followlinks=False):
        here = Path(current)
        for name in sorted(dirs):
            if (here / name).is_symlink():
                refuse(here / name, REFUSED_SYMLINK)
        dirs[:] = sorted(d for d in dirs if not (here / d).is_symlink() and d != REJECTED_FOLDER)
        for name in files:
            path = here / name
            if is_open_file(path) and not path.is_symlink():
                try:
                    recovered = recover_abandoned(path)
                except OSError as exc:  # e.g. a read-only landing folder: said, not hidden
                    log.warning(
                        "%s: a dead writer's file could not be recovered: %s", printable(path), exc
                    )
                    continue
                if recovered is None:
                    continue
                log.warning("%s: recovered the file a dead writer left", printable(recovered))
                path = recovered
            if not _has_landing_suffix(path):
                continue
            if path.is_symlink():
                refuse(path, REFUSED_SYMLINK)
            elif not path.resolve().is_relative_to(root):
                refuse(path, REFUSED_OUTSIDE)
            elif path.is_file():
                if _is_hard_link(path):
                    refuse(path, REFUSED_HARDLINK)
                else:
                    found.append(path.resolve())
    return sorted(found)


def oldest_landing_file_after(landing: Path, after: float) -> float | None:
    """The modification time of the oldest landing file under `landing` written after `after`
    (Unix time), without touching any file (`discover` recovers a dead writer's files); None when
    there is none. Folders named `rejected` are not searched."""
    oldest = None
    for current, dirs, files in os.walk(landing, followlinks=False):
        dirs[:] = [d for d in dirs if d != REJECTED_FOLDER]
        for name in files:
            path = Path(current) / name
            if not is_landing_file(path):
                continue
            with suppress(FileNotFoundError):  # ingested and moved, or removed, meanwhile
                written = path.stat().st_mtime
                if written > after and (oldest is None or written < oldest):
                    oldest = written
    return oldest


def content_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(8 * 1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def lines_relation(
    con: duckdb.DuckDBPyConnection, path: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> str:
    """A SQL relation of `(line_number, raw_text)` for one landing file.

    JSON Lines are read as plain text, one column per line (the delimiter is a control character
    that valid JSON cannot contain unescaped), so a malformed line is kept with its text instead of
    failing the read. DuckDB refuses the whole file if a line is longer than `max_line_bytes` (or
    not UTF-8): `decoded_lines` reads such a file. Parquet rows are rendered to their JSON text
    here (the validation judges them on their typed columns, `parquet_rows`, and renders only the
    rows its rule ladder must read).
    """
    if path.name.endswith(PARQUET_SUFFIXES):
        return _parquet_lines(con, path)
    return f"""(
      select row_number() over () as line_number, raw_text
      from read_csv({literal(str(path))}, columns = {{'raw_text': 'VARCHAR'}}, header = false,
                    delim = e'\\x1f', quote = '', escape = '', auto_detect = false,
                    compression = 'auto', strict_mode = false,
                    max_line_size = {int(max_line_bytes)})
    )"""


_DECIMAL_FIELDS = frozenset(name for name, field in all_fields().items() if field.kind == "decimal")


def parquet_rows(
    con: duckdb.DuckDBPyConnection, paths: dict[int, Path]
) -> list[tuple[str, dict[str, str]]]:
    """Parquet landing files (by file index) as relations of their rows, one per schema (the files
    of one schema are read together), each with `file_index`, `line_number` (the row's place in
    its file, from 1, however it is read) and the files' columns with their DuckDB types."""
    schemas: dict[tuple[tuple[str, str], ...], dict[int, Path]] = {}
    for index, path in paths.items():
        source = f"read_parquet({literal(str(path))})"
        columns = con.execute(f"describe select * from {source}").fetchall()
        schemas.setdefault(tuple((name, kind) for name, kind, *_ in columns), {})[index] = path
    relations = []
    for schema, files in schemas.items():
        listed = ", ".join(literal(str(path)) for path in files.values())
        which = " ".join(f"when {literal(str(path))} then {index}" for index, path in files.items())
        # Files of one schema: no column is widened to fit another file's type.
        source = f"read_parquet([{listed}], file_row_number = true, filename = true)"
        relation = f"""(
      select case filename {which} end as file_index, file_row_number + 1 as line_number,
        * exclude (filename, file_row_number)
      from {source}
    )"""
        relations.append((relation, dict(schema)))
    return relations


def exact_text_sql(column: str, kind: str) -> str | None:
    """SQL: the JSON string an exact Parquet column's value is rendered as, for the kinds with
    one (an instant as RFC 3339 UTC, a decimal as its exact text); None for the other kinds. The
    rendering (`parquet_text_sql`) and the validation on typed columns
    (`validation._column_as_json`) both read it here, so the two cannot spell a value apart."""
    if kind.startswith("TIMESTAMP WITH TIME ZONE"):
        return f"strftime(timezone('UTC', {identifier(column)}), '%Y-%m-%dT%H:%M:%S.%fZ')"
    if kind.startswith("DECIMAL"):
        # Exact: JSON numbers would pass through a double on the way back.
        return f"cast({identifier(column)} as varchar)"
    return None


def parquet_text_sql(columns: dict[str, str]) -> str:
    """SQL: a Parquet row (of a relation with `columns`) as the JSON text of the line it stands
    for, the raw text the validation's rule ladder reads and a quarantined row keeps."""
    rendered = []
    for name, kind in columns.items():
        ident = identifier(name)
        if (text := exact_text_sql(name, kind)) is not None:
            value = text
        elif kind in ("DOUBLE", "FLOAT") and name in _DECIMAL_FIELDS:
            # A float column for a decimal field is refused as `bad_type` (SPEC 3): its values are
            # binary approximations, read through their shortest text (issue 26). An object is a
            # type no decimal takes, and it names the column's type in the quarantine sample.
            value = f"case when {ident} is not null then json_object({literal(kind.lower())}, {ident}) end"
        else:
            value = ident
        rendered.append(f"{literal(name)}, {value}")
    return f"cast(json_object({', '.join(rendered)}) as varchar)"


def _parquet_lines(con: duckdb.DuckDBPyConnection, path: Path) -> str:
    [(rows, columns)] = parquet_rows(con, {0: path})
    return f"(select line_number, {parquet_text_sql(columns)} as raw_text from {rows})"


@dataclass(frozen=True)
class LongLine:
    """A line longer than the line limit: quarantined by itself as `line_too_long`, never held
    whole in memory; only its size and its first bytes are kept."""

    line_number: int
    size: int  # in bytes, without its line break
    head: str  # its first LONG_LINE_HEAD_BYTES bytes, decoded as `decoded_lines` decodes a line

    def detail(self, max_line_bytes: int) -> str:
        return f"{self.size:,} bytes, over the line limit of {max_line_bytes:,} bytes"


# What a line too long keeps of its text in the quarantine: enough to tell what sent it.
LONG_LINE_HEAD_BYTES = 1024
# A long line is skipped this many bytes at a time.
_SKIP_BYTES = 2**20


def decoded_lines(path: Path, max_line_bytes: int) -> tuple[pa.Table, list[LongLine]]:
    """`(line_number, raw_text)` of a JSON Lines file DuckDB's text reader refuses as a whole (a
    line not valid UTF-8, or longer than `max_line_bytes`), read here a line at a time.

    Each undecodable byte is written as `\\xNN`, so nothing of the line is lost. A JSON text
    cannot hold that spelling (a backslash outside a string, or an unknown escape inside one), so
    such a line is quarantined as malformed_json and every other line of the file reads as it is.
    A line longer than `max_line_bytes` is skipped as it is read, so memory never holds it whole:
    its row holds its first bytes and it is returned as a `LongLine`, for its verdict
    (`line_too_long`) to replace the one its first bytes get.
    """
    numbers: list[int] = []
    texts: list[str] = []
    long_lines: list[LongLine] = []
    for number, line in numbered_lines(path, max_line_bytes):
        numbers.append(number)
        if isinstance(line, LongLine):
            long_lines.append(line)
            texts.append(line.head)
        else:
            texts.append(line.decode("utf-8", errors="backslashreplace"))
    table = pa.table(
        {"line_number": pa.array(numbers, pa.int64()), "raw_text": pa.array(texts, pa.string())}
    )
    return table, long_lines


def numbered_lines(path: Path, max_line_bytes: int) -> Iterator[tuple[int, bytes | LongLine]]:
    """Each line of a JSON Lines file (decompressed as a stream) with its number from 1, without
    its line break (`\\n` or `\\r\\n`); a line over `max_line_bytes` as a `LongLine`, read past in
    pieces. Memory holds one line of at most `max_line_bytes` at a time."""
    opener = gzip.open if path.name.endswith(".gz") else open
    # Room for the longest line allowed, its `\r\n`, and one byte more: a line that fills it
    # all without ending is over the limit.
    window = max_line_bytes + 3
    with opener(path, "rb") as handle:
        number = 0
        while line := handle.readline(window):
            number += 1
            ended = line.endswith(b"\n")
            if ended or len(line) < window:
                text = line.removesuffix(b"\n").removesuffix(b"\r") if ended else line
                if len(text) <= max_line_bytes:
                    yield number, text
                    continue
            yield number, _read_past(handle, number, line)


def _read_past(handle: BinaryIO, number: int, start: bytes) -> LongLine:
    """The rest of a long line, which began with `start`, read and dropped a piece at a time."""
    size, tail = len(start), start[-2:]
    while not tail.endswith(b"\n") and (piece := handle.readline(_SKIP_BYTES)):
        size += len(piece)
        # the last two bytes read: a `\r\n` may be split between two pieces
        tail = piece[-2:] if len(piece) > 1 else tail[-1:] + piece
    if tail.endswith(b"\n"):
        size -= 2 if tail == b"\r\n" else 1
    head = start[:LONG_LINE_HEAD_BYTES].decode("utf-8", errors="backslashreplace")
    return LongLine(number, size, head)


# A file larger than this (counted as `expanded_size`) is validated and committed a piece at a
# time (`chunks`), so memory does not grow with file size.
CHUNKED_ABOVE_BYTES = 64 * 2**20
CHUNK_BYTES = 32 * 2**20
# What a compressed landing file holds, in bytes of JSON lines, per byte on disk: gzip compresses
# events about 8x; Parquet about 9x (the bench month: 399 MB of JSON lines, 43 MB of Parquet).
EXPANSION = {".gz": 8, ".parquet": 9}


def expanded_size(path: Path) -> int:
    """About what the file holds in JSON lines: the memory its rows take in a batch."""
    return path.stat().st_size * EXPANSION.get(path.suffix, 1)


def is_large(path: Path) -> bool:
    return expanded_size(path) > CHUNKED_ABOVE_BYTES


def chunks(path: Path, folder: Path, chunk_bytes: int | None = None) -> Iterator[tuple[Path, int]]:
    """Pieces of a landing file, each a landing file of its own in `folder`, with the number of
    lines before it: newline-aligned byte ranges of JSON Lines (decompressed as a stream), row
    groups of Parquet. Each piece is overwritten by the next, so the disk holds one at a time."""
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    if path.name.endswith(PARQUET_SUFFIXES):
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(path)
        piece, offset = folder / "piece.parquet", 0
        for group in range(parquet.num_row_groups):
            table = parquet.read_row_group(group)
            pq.write_table(table, piece)
            yield piece, offset
            offset += table.num_rows
        return
    piece, offset = folder / "piece.jsonl", 0
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        # Written to the piece as read: a line longer than a block (one too long to ingest among
        # them) grows the piece on disk, never memory; the validation quarantines it by itself.
        carry, lines = b"", 0
        while True:
            with piece.open("wb") as out:
                out.write(carry)
                while block := handle.read(chunk_bytes):
                    cut = block.rfind(b"\n")
                    if cut < 0:  # inside one line: keep reading
                        out.write(block)
                        continue
                    out.write(memoryview(block)[: cut + 1])
                    lines, carry = block.count(b"\n", 0, cut + 1), block[cut + 1 :]
                    break
                else:  # end of file: what is left is the last line(s), maybe unterminated
                    if out.tell() == 0:
                        return
                    carry = None
            yield piece, offset
            if carry is None:
                return
            offset += lines
