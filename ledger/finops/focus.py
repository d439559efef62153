"""`ledger export focus`: the ledger's cost as a FOCUS 1.0 dataset, from the published copy.

The charges are defined once, in the mart `marts.fct_focus_charges` (FOCUS column names, exact
DECIMAL(38, 12) costs); this module only filters, formats and writes them:

- CSV: every cost and quantity as plain decimal text (`0.004200000000`, never an exponent or a
  float), date-times as `2026-11-16T16:00:00Z`, Tags as a JSON object, a text cell that a
  spreadsheet would read as a formula marked as text (ledger.escaping.spreadsheet).
- Parquet: DECIMAL(38, 12) columns and UTC timestamps.

Usage the rate card could not price is not a charge: it goes to a sidecar file next to the export
(`<name>.unpriced.csv|.parquet`, from `marts.fct_focus_unpriced_usage`) with its quantities.
Both files are written under a temporary name and renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb

from ledger.core.settings import Settings
from ledger.escaping import spreadsheet

CHARGES_TABLE = "marts.fct_focus_charges"
UNPRICED_TABLE = "marts.fct_focus_unpriced_usage"
FORMATS = {".csv": "(format csv, header true)", ".parquet": "(format parquet)"}
FOCUS_TIMESTAMP = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True)
class FocusExport:
    path: Path
    charges: int
    unpriced_path: Path
    unpriced_lines: int


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def sidecar_path(out: Path) -> Path:
    return out.with_name(f"{out.stem}.unpriced{out.suffix}")


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]]:
    schema, name = table.split(".")
    return con.execute(
        "select column_name, data_type from information_schema.columns "
        "where table_catalog = 'published' and table_schema = ? and table_name = ? "
        "order by ordinal_position",
        [schema, name],
    ).fetchall()


def _projection(columns: list[tuple[str, str]], csv: bool) -> str:
    parts = []
    for name, kind in columns:
        quoted = f'"{name}"'
        if csv and kind.startswith("TIMESTAMP"):
            parts.append(f"strftime({quoted}, '{FOCUS_TIMESTAMP}') as {quoted}")
        elif not csv and kind == "TIMESTAMP":
            # Parquet: instants marked as UTC.
            parts.append(f"cast({quoted} as timestamptz) as {quoted}")
        elif csv:
            # Provider and model names come from events (a model named `=2+5`): text, never a
            # formula in the spreadsheet that opens the file.
            parts.append(spreadsheet.sql_column(name, kind))
        else:
            parts.append(quoted)
    return ", ".join(parts)


def _period(column: str, date_from: date | None, date_to: date | None) -> tuple[str, list]:
    """A WHERE condition on business dates from..to (inclusive) and its parameters."""
    bounds = [(f"{column} >= ?", date_from), (f"{column} <= ?", date_to)]
    conditions = [condition for condition, value in bounds if value is not None]
    return " and ".join(conditions) or "true", [v for _, v in bounds if v is not None]


def _write(con: duckdb.DuckDBPyConnection, query: str, params: list, out: Path) -> int:
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    con.execute(f"create or replace temp table export_rows as {query}", params)
    (rows,) = con.execute("select count(*) from export_rows").fetchone()
    try:
        con.execute(f"copy export_rows to {_sql_string(str(partial))} {FORMATS[out.suffix]}")
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return int(rows)


def export_focus(
    settings: Settings,
    out: Path,
    date_from: date | None = None,
    date_to: date | None = None,
) -> FocusExport:
    """Write the FOCUS charges of business dates from..to (inclusive) and their unpriced sidecar."""
    out = Path(out)
    if out.suffix not in FORMATS:
        raise ValueError(f"--out must end in .csv or .parquet, got {out.name!r}")
    if date_from is not None and date_to is not None and date_from > date_to:
        raise ValueError(f"--from {date_from} is after --to {date_to}; swap them")
    source = settings.published_path
    if not source.exists():
        raise FileNotFoundError(
            f"no published copy at {source}; run `ledger build` first "
            "(or set LEDGER_HOME to the installation you mean)"
        )
    csv = out.suffix == ".csv"
    sidecar = sidecar_path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach {_sql_string(str(source))} as published (read_only)")
        charge_columns = _columns(con, CHARGES_TABLE)
        if not charge_columns:
            raise LookupError(f"{source} has no {CHARGES_TABLE}; run `ledger build` to create it")
        where, params = _period("x_business_date", date_from, date_to)
        charges = _write(
            con,
            f"select {_projection(charge_columns, csv)} from published.{CHARGES_TABLE} "
            f"where {where} order by x_business_date, x_tenant_id, x_session_id, x_component, "
            "x_provider, x_model",
            params,
            out,
        )
        unpriced_columns = _columns(con, UNPRICED_TABLE)
        where, params = _period("business_date", date_from, date_to)
        unpriced = _write(
            con,
            f"select {_projection(unpriced_columns, csv)} "
            f"from published.{UNPRICED_TABLE} where {where} "
            "order by business_date, tenant_id, session_id, component, provider, model, meter",
            params,
            sidecar,
        )
    return FocusExport(out, charges, sidecar, unpriced)
