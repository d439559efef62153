"""`ledger reconcile import FILE`: a provider's invoice or usage export, for the reconciliation.

The file is a CSV a person prepares from the provider's bill, one row per UTC day, provider,
component and (optionally) model and line item:

    date,provider,component,model,item,amount,currency
    2026-11-20,deepseek,llm,deepseek-chat,chat-tokens,412.50,CNY

It is validated like the reference files (every problem named by file, line and rule, nothing
loaded while any problem remains) and loaded into the warehouse table `imports.provider_costs`,
replacing the rows an earlier import of a file of the same name loaded (a corrected bill replaces
the old one). The next `ledger build` reconciles it (marts.fct_reconciliation_daily).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated

import duckdb
from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic_core import PydanticCustomError

from ledger.contract.events import Component
from ledger.core.settings import Settings
from ledger.reference.csv_files import read_csv
from ledger.reference.errors import ReferenceDataError
from ledger.reference.rules import CalendarDate, Currency, Money, Text
from ledger.warehouse import connect

COLUMNS: tuple[str, ...] = ("date", "provider", "component", "model", "item", "amount", "currency")
COMPONENTS: tuple[str, ...] = Component.__args__  # type: ignore[attr-defined]
TABLE = "imports.provider_costs"

_DDL = f"""
    create table if not exists {TABLE} (
        file_name varchar not null,
        line_number integer not null,
        usage_date date not null,
        provider varchar not null,
        component varchar not null,
        model varchar,
        item varchar,
        amount decimal(38, 12) not null,
        currency varchar not null,
        imported_at timestamp not null
    )
"""


def ensure_provider_costs_table(con: duckdb.DuckDBPyConnection) -> None:
    """`imports.provider_costs`, empty, unless `con` has it already."""
    con.execute("create schema if not exists imports")
    con.execute(_DDL)


def _optional(value: object) -> object:
    return None if isinstance(value, str) and not value.strip() else value


def _component(value: object) -> str:
    if value not in COMPONENTS:
        raise PydanticCustomError(
            "bad_value",
            "component '{value}' is not a ledger component; use one of: {allowed}",
            {"value": str(value), "allowed": ", ".join(COMPONENTS)},
        )
    return str(value)


class ProviderCostRow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    line_number: int
    usage_date: CalendarDate
    provider: Text
    component: Annotated[str, BeforeValidator(_component)]
    model: Annotated[str | None, BeforeValidator(_optional)] = None
    item: Annotated[str | None, BeforeValidator(_optional)] = None
    amount: Money
    currency: Currency


def read_provider_costs(path: Path) -> list[ProviderCostRow]:
    """The validated rows of `path`; `ReferenceDataError` (file, line, rule) when any is wrong."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"no provider cost file at {path}") from exc
    result = read_csv(path.name, data, COLUMNS, ProviderCostRow, {"date": "usage_date"})
    if result.problems:
        raise ReferenceDataError(path.parent, result.problems)
    return result.rows


def import_provider_costs(settings: Settings, path: Path) -> tuple[int, Decimal]:
    """Validate `path` and load it (one transaction); returns (rows, sum of amounts as given)."""
    path = Path(path)
    rows = read_provider_costs(path)
    now = datetime.now(UTC).replace(tzinfo=None)
    with connect(settings.warehouse_path) as con:
        con.execute("begin")
        ensure_provider_costs_table(con)
        con.execute(f"delete from {TABLE} where file_name = ?", [path.name])
        con.executemany(
            f"insert into {TABLE} values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                [
                    path.name,
                    row.line_number,
                    row.usage_date,
                    row.provider,
                    row.component,
                    row.model,
                    row.item,
                    row.amount,
                    row.currency,
                    now,
                ]
                for row in rows
            ],
        )
        con.execute("commit")
    return len(rows), sum((row.amount for row in rows), Decimal(0))
