"""`write_reference_tables`: the validated reference data as tables in schema `reference`.

The column names and types below are a contract with the dbt models. Values travel as Arrow
decimal128 (built from `Decimal`), so nothing passes through float on the way in, and the derived
unit prices (`unit_price`, `price_per_second`) are already exact: SQL only multiplies.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa

from ledger.reference.models import ReferenceData
from ledger.reference.rules import to_money_scale

SCHEMA = "reference"


@dataclass(frozen=True)
class Column:
    name: str
    sql_type: str
    arrow_type: pa.DataType


def _varchar(name: str) -> Column:
    return Column(name, "VARCHAR", pa.string())


def _money(name: str) -> Column:
    return Column(name, "DECIMAL(38,12)", pa.decimal128(38, 12))


def _unit_price(name: str) -> Column:
    return Column(name, "DECIMAL(38,20)", pa.decimal128(38, 20))


def _timestamp(name: str) -> Column:
    return Column(name, "TIMESTAMP", pa.timestamp("us"))


def _integer(name: str) -> Column:
    return Column(name, "INTEGER", pa.int32())


TABLES: dict[str, tuple[Column, ...]] = {
    "rate_card": (
        _integer("line_number"),
        _varchar("provider"),
        _varchar("model"),
        _varchar("meter"),
        _money("price"),
        _money("per"),
        _varchar("currency"),
        _timestamp("effective_from"),
        _timestamp("effective_to"),
        _unit_price("unit_price"),
    ),
    "fx_rates": (
        Column("rate_date", "DATE", pa.date32()),
        _varchar("currency"),
        _money("rate"),
    ),
    "price_plans": (
        _integer("line_number"),
        _varchar("tenant_id"),
        _money("price_per_minute"),
        _money("per_session_fee"),
        _integer("billing_increment_seconds"),
        _varchar("currency"),
        _timestamp("effective_from"),
        _timestamp("effective_to"),
        _unit_price("price_per_second"),
    ),
    # tenant_id NULL: the scenario default. segment: the five contract segments and 'first_audio'
    # (owner NULL). Every tenant with an override has a full set of rows, override merged over the
    # default, so a lookup is coalesce(tenant row, default row).
    "latency_budgets": (
        _varchar("scenario"),
        _varchar("tenant_id"),
        _varchar("segment"),
        _integer("budget_ms"),
        _varchar("owner"),
        # SPEC 13: the scenario's profile and its SLO objective (the share within budget).
        _varchar("profile"),
        Column("objective", "DECIMAL(5,4)", pa.decimal128(5, 4)),
    ),
    # SPEC 13 spend budgets: provider NULL budgets the tenant's whole month.
    "spend_budgets": (
        _integer("line_number"),
        _varchar("tenant_id"),
        Column("budget_month", "DATE", pa.date32()),
        _money("amount"),
        _varchar("currency"),
        _varchar("provider"),
    ),
    # SPEC 4 aliases; `seen` as the file writes it (dbt matches it lower-cased).
    "provider_aliases": (
        _integer("line_number"),
        _varchar("seen"),
        _varchar("provider"),
    ),
    "model_aliases": (
        _integer("line_number"),
        _varchar("provider"),
        _varchar("seen"),
        _varchar("model"),
    ),
    "meta": (
        _varchar("reporting_currency"),
        _timestamp("loaded_at"),
        _varchar("reference_dir"),
        _varchar("content_sha256"),
    ),
}


def _rows(ref: ReferenceData) -> dict[str, list[tuple[object, ...]]]:
    return {
        "rate_card": [
            (
                row.line_number,
                row.provider,
                row.model,
                row.meter,
                to_money_scale(row.price),
                to_money_scale(row.per),
                row.currency,
                row.effective_from,
                row.effective_to,
                row.unit_price,
            )
            for row in ref.rate_card
        ],
        "fx_rates": [
            (row.rate_date, row.currency, to_money_scale(row.rate)) for row in ref.fx_rates
        ],
        "price_plans": [
            (
                row.line_number,
                row.tenant_id,
                to_money_scale(row.price_per_minute),
                to_money_scale(row.per_session_fee),
                row.billing_increment_seconds,
                row.currency,
                row.effective_from,
                row.effective_to,
                row.price_per_second,
            )
            for row in ref.price_plans
        ],
        "latency_budgets": [
            (
                row.scenario,
                row.tenant_id,
                row.segment,
                row.budget_ms,
                row.owner,
                row.profile,
                row.objective,
            )
            for row in ref.latency_budgets
        ],
        "spend_budgets": [
            (
                row.line_number,
                row.tenant_id,
                row.month,
                to_money_scale(row.amount),
                row.currency,
                row.provider,
            )
            for row in ref.spend_budgets
        ],
        "provider_aliases": [
            (row.line_number, row.seen, row.provider) for row in ref.provider_aliases
        ],
        "model_aliases": [
            (row.line_number, row.provider, row.seen, row.model) for row in ref.model_aliases
        ],
        "meta": [
            (
                ref.reporting_currency,
                ref.loaded_at,
                str(ref.reference_dir),
                ref.content_sha256,
            )
        ],
    }


def _arrow_table(columns: tuple[Column, ...], rows: list[tuple[object, ...]]) -> pa.Table:
    schema = pa.schema([pa.field(column.name, column.arrow_type) for column in columns])
    arrays = [
        pa.array([row[index] for row in rows], type=column.arrow_type)
        for index, column in enumerate(columns)
    ]
    return pa.table(arrays, schema=schema)


def write_reference_tables(con: duckdb.DuckDBPyConnection, ref: ReferenceData) -> None:
    """(Re)create the `reference` tables from `ref`, all or nothing, in one transaction.

    `con` must not be inside a transaction already. Other objects in schema `reference` are kept.
    """
    rows = _rows(ref)
    arrow_tables = {name: _arrow_table(columns, rows[name]) for name, columns in TABLES.items()}
    con.begin()
    try:
        con.execute(f"create schema if not exists {SCHEMA}")
        for name, columns in TABLES.items():
            view = f"_ledger_reference_{name}"
            column_list = ", ".join(column.name for column in columns)
            definition = ", ".join(f"{column.name} {column.sql_type}" for column in columns)
            con.register(view, arrow_tables[name])
            try:
                con.execute(f"create or replace table {SCHEMA}.{name} ({definition})")
                con.execute(
                    f"insert into {SCHEMA}.{name} ({column_list}) select {column_list} from {view}"
                )
            finally:
                con.unregister(view)
        con.commit()
    except BaseException:
        con.rollback()
        raise
