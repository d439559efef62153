"""Landing files: which files count, their content hash, and how each becomes numbered lines."""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ledger.contract.fields import all_fields
from ledger.core.landing import REJECTED_FOLDER, is_open_file, recover_abandoned
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


def content_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(8 * 1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def lines_relation(con: duckdb.DuckDBPyConnection, path: Path) -> str:
    """A SQL relation of `(line_number, raw_text)` for one landing file.

    JSON Lines are read as plain text, one column per line (the delimiter is a control character
    that valid JSON cannot contain unescaped), so a malformed line is kept with its text instead of
    failing the read. Parquet rows are rendered to their JSON text here (the validation judges them
    on their typed columns, `parquet_rows`, and renders only the rows its rule ladder must read).
    """
    if path.name.endswith(PARQUET_SUFFIXES):
        return _parquet_lines(con, path)
    return f"""(
      select row_number() over () as line_number, raw_text
      from read_csv({literal(str(path))}, columns = {{'raw_text': 'VARCHAR'}}, header = false,
                    delim = e'\\x1f', quote = '', escape = '', auto_detect = false,
                    compression = 'auto', strict_mode = false)
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


def decoded_lines(path: Path) -> pa.Table:
    """`(line_number, raw_text)` of a JSON Lines file that is not all valid UTF-8.

    DuckDB's text reader refuses such a file as a whole; here it is decoded in one piece with each
    undecodable byte written as `\\xNN`, so nothing of the line is lost. A JSON text cannot hold
    that spelling (a backslash outside a string, or an unknown escape inside one), so such a line
    is quarantined as malformed_json and every other line of the file reads as it is.
    """
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    text = data.decode("utf-8", errors="backslashreplace")
    if text.endswith("\n"):
        text = text[:-1]
    lines = pc.replace_substring_regex(pa.array(text.split("\n")), "\r$", "")
    return pa.table(
        {"line_number": pa.array(range(1, len(lines) + 1), pa.int64()), "raw_text": lines}
    )


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
        carry = b""
        while True:
            block = handle.read(chunk_bytes)
            data = carry + block
            if not block:  # end of file: what is left is the last line(s), maybe unterminated
                if data:
                    piece.write_bytes(data)
                    yield piece, offset
                return
            cut = data.rfind(b"\n")
            if cut < 0:  # one line longer than a block: keep reading
                carry = data
                continue
            carry = data[cut + 1 :]
            piece.write_bytes(data[: cut + 1])
            yield piece, offset
            offset += data.count(b"\n", 0, cut + 1)
