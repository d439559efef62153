"""`ledger export session-ledger`: `marts.fct_session_ledger` of the published copy to CSV or
Parquet, full precision.

Every column of the mart, exactly as stored: DECIMAL amounts are written as their exact decimal text
in CSV (all 12 places, never through float) and as Parquet DECIMAL(38, 12) columns; timestamps are
naive UTC. In CSV, a text cell that a spreadsheet would read as a formula (a model named `=2+5`)
gets the spreadsheets' text mark in front (ledger.escaping.spreadsheet). Rows are ordered by business date, tenant, start and session id, so two exports of the
same ledger are byte-identical.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import duckdb

from ledger.core.settings import Settings
from ledger.core.sql import literal
from ledger.escaping import spreadsheet

LEDGER_TABLE = "fct_session_ledger"
FORMATS = {".csv": "(format csv, header true)", ".parquet": "(format parquet)"}


def _source_database(settings: Settings) -> Path:
    """The published copy: the export shows what the boards show, never a build in progress."""
    if not settings.published_path.exists():
        raise FileNotFoundError(
            f"no published copy at {settings.published_path}; run `ledger build` first "
            "(or set LEDGER_HOME to the installation you mean)"
        )
    return settings.published_path


def export_session_ledger(
    settings: Settings,
    out: Path,
    tenant: str | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
) -> int:
    """Write the session ledger (optionally one tenant, business dates from..to inclusive) to `out`.

    The format follows the suffix (`.csv` or `.parquet`). Returns the number of rows written. The
    file is written next to `out` and renamed over it, so a reader never sees half a file.
    """
    out = Path(out)
    if out.suffix not in FORMATS:
        raise ValueError(f"--out must end in .csv or .parquet, got {out.name!r}")
    if date_from is not None and date_to is not None and date_from > date_to:
        raise ValueError(f"--from {date_from} is after --to {date_to}; swap them")

    conditions, params = [], []
    if tenant is not None:
        conditions.append("tenant_id = ?")
        params.append(tenant)
    if date_from is not None:
        conditions.append("business_date >= ?")
        params.append(date_from)
    if date_to is not None:
        conditions.append("business_date <= ?")
        params.append(date_to)
    where = f"where {' and '.join(conditions)}" if conditions else ""

    source = _source_database(settings)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach {literal(str(source))} as ledger_source (read_only)")
        tables = con.execute(
            "select count(*) from information_schema.tables "
            "where table_catalog = 'ledger_source' and table_schema = 'marts' "
            "and table_name = ?",
            [LEDGER_TABLE],
        ).fetchone()
        if not tables or tables[0] == 0:
            raise LookupError(
                f"{source} has no marts.{LEDGER_TABLE}; run `ledger build` to create it"
            )
        # The filter is bound as parameters into a temp table; COPY itself takes no parameters.
        con.execute(
            "create temp table session_ledger_export as "
            f"select * from ledger_source.marts.{LEDGER_TABLE} {where} "
            "order by business_date, tenant_id, started_at, session_id",
            params,
        )
        (rows,) = con.execute("select count(*) from session_ledger_export").fetchone()
        columns = "*"
        if out.suffix == ".csv":
            described = con.execute("describe session_ledger_export").fetchall()
            columns = ", ".join(spreadsheet.sql_column(name, kind) for name, kind, *_ in described)
        try:
            con.execute(
                f"copy (select {columns} from session_ledger_export) "
                f"to {literal(str(partial))} {FORMATS[out.suffix]}"
            )
            partial.replace(out)
        finally:
            partial.unlink(missing_ok=True)
    return int(rows)
