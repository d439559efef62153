"""Reading one reference CSV into validated rows, with every problem located by line.

Lines are counted in the file as an editor shows them (the header is line 1), so a row with a quoted
multi-line cell is reported at the line where it starts. Rows whose cells are all empty (what a
spreadsheet leaves after deleted rows) are skipped. Cells are stripped of surrounding spaces.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ledger.reference.errors import Problem
from ledger.reference.rules import VALUE_RULES

RowT = TypeVar("RowT", bound=BaseModel)


@dataclass
class CsvResult(Generic[RowT]):
    rows: list[RowT] = field(default_factory=list)
    # Every data row as read (line, column -> cell), valid or not: cross-file checks look at these
    # so that one bad row does not also produce a misleading "missing" problem elsewhere.
    raw_rows: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # False when the file is missing or its header is unusable: its rows could not be read at all.
    readable: bool = False


def decode(file_name: str, data: bytes) -> tuple[str | None, list[Problem]]:
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [
            Problem(
                file_name,
                line,
                "bad_encoding",
                "the file is not UTF-8 text; save it as 'CSV UTF-8' (or plain UTF-8) and load "
                "again",
            )
        ]


def problems_from_validation(
    error: ValidationError, file_name: str, line: int | None
) -> list[Problem]:
    problems = []
    for item in error.errors(include_url=False):
        column = ".".join(str(part) for part in item["loc"])
        rule = item["type"]
        message = item["msg"]
        if rule not in VALUE_RULES:  # pydantic's own checks: should not happen with CSV text
            rule, message = "bad_value", f"{column}: {message}"
        problems.append(Problem(file_name, line, rule, message))
    return problems


def read_csv(
    file_name: str,
    data: bytes,
    columns: tuple[str, ...],
    model: type[RowT],
    field_of_column: dict[str, str] | None = None,
) -> CsvResult[RowT]:
    """Parse `data` (the bytes of `file_name`) into `model` rows; problems instead of exceptions."""
    result: CsvResult[RowT] = CsvResult()
    text, result.problems = decode(file_name, data)
    if text is None:
        return result
    rename = field_of_column or {}
    expected = ", ".join(columns)

    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        result.problems.append(_bad_csv(file_name, reader.line_num, exc))
        return result
    if header is None or not any(cell.strip() for cell in header):
        result.problems.append(
            Problem(
                file_name,
                1,
                "missing_header",
                f"the first line must be the header: {expected}",
            )
        )
        return result

    names = [cell.strip() for cell in header]
    header_ok = True
    seen: set[str] = set()
    for name in names:
        if name in seen:
            header_ok = False
            result.problems.append(
                Problem(
                    file_name,
                    1,
                    "duplicate_column",
                    f"column '{name}' appears twice in the header; keep one "
                    f"(the header must be: {expected})",
                )
            )
        seen.add(name)
    for column in columns:
        if column not in names:
            header_ok = False
            result.problems.append(
                Problem(
                    file_name,
                    1,
                    "missing_column",
                    f"column '{column}' is missing from the header; the header must be: {expected}",
                )
            )
    for name in names:
        if name not in columns:
            what = f"column '{name}'" if name else "an empty column name (a trailing comma?)"
            result.problems.append(
                Problem(
                    file_name,
                    1,
                    "extra_column",
                    f"the header has {what}, which is not one of this file's columns; remove it "
                    f"(the header must be: {expected})",
                )
            )
    if not header_ok:
        return result
    result.readable = True

    previous_end = reader.line_num
    while True:
        try:
            record = next(reader, None)
        except csv.Error as exc:
            result.problems.append(_bad_csv(file_name, reader.line_num, exc))
            break
        if record is None:
            break
        line, previous_end = previous_end + 1, reader.line_num
        if not any(cell.strip() for cell in record):
            continue
        if len(record) != len(names):
            result.problems.append(
                Problem(
                    file_name,
                    line,
                    "wrong_field_count",
                    f"this row has {len(record)} fields but the header has {len(names)}; look "
                    "for a missing or extra comma (quote text that contains a comma)",
                )
            )
            continue
        cells = {
            name: cell.strip() for name, cell in zip(names, record, strict=True) if name in columns
        }
        result.raw_rows.append((line, cells))
        values: dict[str, object] = {rename.get(name, name): cell for name, cell in cells.items()}
        try:
            result.rows.append(model.model_validate({"line_number": line, **values}))
        except ValidationError as exc:
            result.problems.extend(problems_from_validation(exc, file_name, line))
    return result


def _bad_csv(file_name: str, line: int, exc: csv.Error) -> Problem:
    return Problem(
        file_name,
        max(line, 1),
        "bad_csv",
        f"the file is not valid CSV here ({exc}); check the quotes on this line",
    )
