"""Ingest landing files into the warehouse's raw layer (SPEC 3): `files` discovers landing files and
numbers their lines, `validation` and `stage` judge every line in bulk SQL derived from the contract,
`load` deduplicates and commits them (quarantining each bad line with its reason), `recover` rebuilds
the raw layer from the landing folder."""

from __future__ import annotations

import logging
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from ledger.core.home_lock import home_lock
from ledger.core.settings import Settings
from ledger.core.terminal import printable
from ledger.ingest.files import chunks, discover, expanded_size, is_large
from ledger.ingest.load import (
    FileResult,
    commit_chunked,
    commit_group,
    forget_wrongly_unreadable,
)
from ledger.ingest.stage import StagedFile, Validator
from ledger.warehouse import (
    bound_memory,
    connect,
    ensure_raw_schema,
    remove_orphan_event_files,
)

__all__ = ["FileResult", "expire_quarantined_text", "ingest_files", "ingest_paths"]

log = logging.getLogger(__name__)

# Files are validated a batch at a time, in one statement: planning the generated validation costs
# about as much as validating a small file, and a larger input lets DuckDB use every core. The
# budget bounds the memory a batch holds (its typed rows, and the raw text of its broken lines)
# until its files commit; the file cap bounds the statement (each file is one more source in it).
BATCH_BYTES = 96 * 2**20
BATCH_FILES = 64
# While one batch commits (its small files in one transaction, in path order) the next is
# validated; this many batches at most are validated and waiting.
BATCHES_AHEAD = 2
# DuckDB checkpoints when the write-ahead log passes 16 MB by default, i.e. after nearly every landing
# file, rewriting the table each time. A larger threshold checkpoints once per many files (and at the
# end); each file is still committed, and durable, through the log.
INGEST_CHECKPOINT_THRESHOLD = "1GB"
# DuckDB's memory on each of the ingest's two connections (the warehouse's, the validator's), and
# where it spills beyond that (`bound_memory`). Unbounded, the warehouse connection's buffer pool
# keeps every page the deduplication reads, so a long ingest grew with the history it reads
# (2.68 GB on a 24M-event month). Python's share (a batch's Arrow rows, BATCHES_AHEAD of them
# waiting) comes on top and is bounded by BATCH_BYTES.
INGEST_MEMORY_LIMIT = "384MB"


def ingest_paths(
    settings: Settings,
    paths: list[Path],
    *,
    ingest_time: datetime | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    on_start: Callable[[list[Path]], None] | None = None,
    on_refused: Callable[[Path, str], None] | None = None,
    landing: Path | None = None,
) -> list[FileResult]:
    """Ingest every landing file under `paths` in path order, each file wholly or not at all.

    Symbolic links, hard links and paths resolving outside the folder searched (and, given
    `landing`, paths named outside it) are refused (`on_refused`).
    """
    files = discover(paths, on_refused, landing)
    if on_start is not None:
        on_start(files)
    return ingest_files(settings, files, ingest_time=ingest_time, on_file=on_file)


def ingest_files(
    settings: Settings,
    files: list[Path],
    *,
    ingest_time: datetime | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    warehouse_path: Path | None = None,
) -> list[FileResult]:
    """Ingest `files` (already discovered) in the order given, each file wholly or not at all
    (small files validated together commit together), into `warehouse_path` (default: the
    settings' warehouse); holding the home's run lock (waiting for another run's end)."""
    with home_lock(settings.home, wait=True):
        return _ingest_files(
            settings, files, ingest_time=ingest_time, on_file=on_file, warehouse_path=warehouse_path
        )


def _ingest_files(
    settings: Settings,
    files: list[Path],
    *,
    ingest_time: datetime | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    warehouse_path: Path | None = None,
) -> list[FileResult]:
    """Ingest `files` (already discovered) in the order given, each file wholly or not at all
    (small files validated together commit together), into `warehouse_path` (default: the
    settings' warehouse)."""
    results: list[FileResult] = []
    with (
        connect(warehouse_path or settings.warehouse_path) as con,
        Validator(
            INGEST_MEMORY_LIMIT,
            spill_folder(settings),
            settings.max_line_bytes,
            clock_skew_minutes=settings.clock_skew_minutes,
        ) as validator,
        ThreadPoolExecutor(1, thread_name_prefix="validate") as pool,
    ):
        bound_memory(con, INGEST_MEMORY_LIMIT, spill_folder(settings))
        ensure_raw_schema(con)
        # Parquet files a killed run wrote but never committed: not part of raw.events; delete.
        remove_orphan_event_files(con)
        expire_quarantined_text(con, settings.quarantine_retention_days, ingest_time)
        for path in forget_wrongly_unreadable(con, files):
            log.warning("%s: quarantined whole by an earlier version, read again", printable(path))
        known = frozenset(
            sha
            for (sha,) in con.execute("select content_sha256 from raw.ingested_files").fetchall()
        )
        con.execute(f"set checkpoint_threshold = '{INGEST_CHECKPOINT_THRESHOLD}'")

        def validate(batch: list[Path]) -> list[StagedFile]:
            return validator.validate(batch, ingest_time=ingest_time, already_ingested=known)

        try:
            _commit_in_order(con, pool, validate, batches(files), results, on_file)
        finally:
            con.execute("reset checkpoint_threshold")
        con.execute("checkpoint")
    return results


def spill_folder(settings: Settings) -> Path:
    """Where the ingest's DuckDB connections spill what does not fit in INGEST_MEMORY_LIMIT."""
    return settings.home / "tmp" / "ingest-spill"


def batches(
    files: list[Path], budget: int = BATCH_BYTES, most: int = BATCH_FILES
) -> Iterator[list[Path]]:
    """Consecutive runs of at most `most` files and about `budget` bytes of rows (`expanded_size`;
    a larger file alone)."""
    batch: list[Path] = []
    size = 0
    for path in files:
        length = expanded_size(path)  # a compressed file's rows take memory as if expanded
        if is_large(path):  # validated and committed a piece at a time, alone
            if batch:
                yield batch
                batch, size = [], 0
            yield [path]
            continue
        if batch and (size + length > budget or len(batch) == most):
            yield batch
            batch, size = [], 0
        batch.append(path)
        size += length
    if batch:
        yield batch


def _commit_in_order(
    con: duckdb.DuckDBPyConnection,
    pool: ThreadPoolExecutor,
    validate: Callable[[list[Path]], list[StagedFile]],
    work: Iterator[list[Path]],
    results: list[FileResult],
    on_file: Callable[[FileResult], None] | None,
) -> None:
    """Validate batches ahead on the pool; commit each batch's files in path order, together.

    Committing in path order keeps "the first version wins" deterministic. A batch's files commit
    in one transaction (`commit_group`: each file's outcome is the one it would have alone, the
    commit's fixed cost is paid once); if that fails, nothing of the batch is in and its files are
    committed one by one, so the files before the failing one go in and its error stops the run
    as it would have alone.
    """
    pending: deque[tuple[list[Path], Future[list[StagedFile]]]] = deque()

    def done(committed: list[FileResult]) -> None:
        for result in committed:
            results.append(result)
            if on_file is not None:
                on_file(result)

    def commit(staged: StagedFile) -> None:
        if staged.chunked:
            with tempfile.TemporaryDirectory(prefix="ledger-ingest-") as folder:
                done([commit_chunked(con, staged, chunks(staged.path, Path(folder)))])
        else:
            done(commit_group(con, [staged]))

    def commit_together(group: list[StagedFile]) -> None:
        if len(group) == 1 or any(staged.chunked for staged in group):
            for staged in group:
                commit(staged)
            return
        try:
            committed = commit_group(con, group)
        except Exception:  # noqa: BLE001 (any failure: commit the group's files one by one)
            for staged in group:
                commit(staged)
            return
        done(committed)

    try:
        while True:
            while len(pending) < BATCHES_AHEAD and (batch := next(work, None)) is not None:
                pending.append((batch, pool.submit(validate, batch)))
            if not pending:
                break
            batch, future = pending.popleft()
            try:
                staged_files = future.result()
            except Exception:  # noqa: BLE001 (any failure: the batch again, file by file)
                # A file that cannot be read fails its whole batch: go through the batch file by
                # file (once the validator is idle), so the files before the unreadable one still
                # go in and its error, naming it, stops the run as it would have alone.
                for _, ahead in pending:
                    ahead.exception()
                for path in batch:
                    for staged in validate([path]):
                        commit(staged)
                continue
            commit_together(staged_files)
    finally:
        # A failure stops the run: let the batches being validated finish before the validator
        # closes.
        for _, future in pending:
            if not future.cancel():
                future.exception()


def expire_quarantined_text(
    con: duckdb.DuckDBPyConnection, retention_days: int, now: datetime | None = None
) -> int:
    """Set NULL the raw text of lines quarantined more than `retention_days` before `now`.

    Quarantined lines can hold anything a client sent (a transcript, a card number); the reason,
    detail, file, line, source and event id stay, so counts and the data-quality page are unchanged.
    Returns how many lines lost their text.
    """
    now = now or datetime.now(UTC)
    cutoff = now.astimezone(UTC).replace(tzinfo=None) - timedelta(days=retention_days)
    [(expired,)] = con.execute(
        "update raw.quarantine set raw_text = null "
        "where raw_text is not null and quarantined_at < ?",
        [cutoff],
    ).fetchall()
    return expired
