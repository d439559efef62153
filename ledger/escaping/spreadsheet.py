"""Outside text inside a CSV that people open in a spreadsheet (the session-ledger and FOCUS
exports).

A cell that starts with `=`, `+`, `-` or `@` is read by Excel, LibreOffice and Google Sheets as a
formula (a model named `=2+5` shows 7; `=HYPERLINK(...)` or `=WEBSERVICE(...)` reach the network);
a leading tab or carriage return is stripped by some of them and lets the next character act. Such
a cell gets a `'` in front, the spreadsheets' own mark for "this is text" (OWASP's rule for CSV
injection). Only text columns are escaped: a number (a negative amount) stays a number. Parquet
files have typed columns and no formulas, so they are written as they are.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
TEXT_MARK = "'"


def cell(value: str) -> str:
    """`value` as a text cell a spreadsheet does not evaluate."""
    return f"{TEXT_MARK}{value}" if value.startswith(FORMULA_STARTS) else value


def sql_cell(expression: str) -> str:
    """The same rule as a DuckDB expression over a VARCHAR `expression`, for a `COPY ... (format
    csv)` of a query (NULL stays NULL)."""
    starts = ", ".join(f"chr({ord(start)})" for start in FORMULA_STARTS)
    return (
        f"case when left({expression}, 1) in ({starts}) "
        f"then chr({ord(TEXT_MARK)}) || {expression} else {expression} end"
    )


def sql_column(name: str, data_type: str) -> str:
    """A column of a table written to CSV, by name and DuckDB type: a VARCHAR column escaped
    (`sql_cell`), any other as it is."""
    quoted = f'"{name}"'
    return f"{sql_cell(quoted)} as {quoted}" if data_type == "VARCHAR" else quoted
