"""`ledger whatif`: a past period repriced under candidate reference data (SPEC 11).

The published ledger is never touched. The warehouse is copied into a scratch home
(`ledger.warehouse.copy_warehouse`), the candidate reference folder is validated and loaded there,
an optional route map rewrites which model served each LLM call (by phase and route, e.g.
greeting and intake on the small model, seed 8.3), and dbt rebuilds the session ledger in the
scratch copy only. Per tenant: cost, revenue and gross margin now (the published ledger) and
under the candidate, and the difference; exact DECIMAL sums, rounded only when shown.

Route map (CSV): `phase,route,provider,model`. An `llm.usage` event whose phase is `phase`
(`*` for any) and whose route is `route` (`*` for any, empty for none) is priced as if `provider`
and `model` had served it; the first matching line wins.
"""

from __future__ import annotations

import csv
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

from ledger.core.numbers import round_money
from ledger.core.settings import Settings
from ledger.core.sql import literal
from ledger.escaping import spreadsheet
from ledger.serving.published_copy import open_published
from ledger.warehouse import connect, copy_warehouse, refresh_events_view

REFERENCE_FILES = (
    "rate_card.csv",
    "fx_rates.csv",
    "price_plans.csv",
    "latency_budgets.yaml",
    "planning.yaml",
    "provider_aliases.csv",
    "model_aliases.csv",
)
ROUTE_MAP_COLUMNS = ["phase", "route", "provider", "model"]


class WhatIfError(ValueError):
    """Bad input to a what-if (a route map line, an empty period); names file, line and rule."""


@dataclass(frozen=True)
class TenantWhatIf:
    tenant_id: str
    sessions: int
    cost_now: Decimal
    cost_candidate: Decimal
    revenue_now: Decimal
    revenue_candidate: Decimal

    @property
    def margin_now(self) -> Decimal:
        return self.revenue_now - self.cost_now

    @property
    def margin_candidate(self) -> Decimal:
        return self.revenue_candidate - self.cost_candidate

    @property
    def cost_difference(self) -> Decimal:
        return self.cost_candidate - self.cost_now

    @property
    def revenue_difference(self) -> Decimal:
        return self.revenue_candidate - self.revenue_now

    @property
    def margin_difference(self) -> Decimal:
        return self.margin_candidate - self.margin_now


@dataclass(frozen=True)
class WhatIf:
    reference_dir: Path
    reference_digest: str  # sha256 of the candidate's reference files, names and contents
    route_map: Path | None
    date_from: date | None
    date_to: date | None
    currency: str
    tenants: list[TenantWhatIf]


@dataclass(frozen=True)
class RouteRule:
    phase: str
    route: str
    provider: str
    model: str


def reference_digest(reference_dir: Path) -> str:
    digest = hashlib.sha256()
    for name in REFERENCE_FILES:
        path = reference_dir / name
        if path.exists():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def load_route_map(path: Path) -> list[RouteRule]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != ROUTE_MAP_COLUMNS:
            raise WhatIfError(
                f"{path} line 1 [bad_header]: the columns must be {','.join(ROUTE_MAP_COLUMNS)}, "
                f"got {','.join(reader.fieldnames or [])}"
            )
        rules = []
        for line, row in enumerate(reader, start=2):
            if not row["provider"] or not row["model"] or not row["phase"]:
                raise WhatIfError(
                    f"{path} line {line} [missing_value]: phase, provider and model are required "
                    "(phase `*` matches any)"
                )
            rules.append(RouteRule(row["phase"], row["route"] or "", row["provider"], row["model"]))
    return rules


def _remap_sql(rules: list[RouteRule], column: str) -> str:
    """SQL: `column` (provider or model) of an event after the route map."""
    cases = []
    for rule in rules:
        conditions = ["event_type = 'llm.usage'"]
        if rule.phase != "*":
            conditions.append(f"phase = {literal(rule.phase)}")
        if rule.route == "":
            conditions.append("route is null")
        elif rule.route != "*":
            conditions.append(f"route = {literal(rule.route)}")
        cases.append(f"when {' and '.join(conditions)} then {literal(getattr(rule, column))}")
    return f"case {' '.join(cases)} else {column} end"


def _apply_route_map(settings: Settings, rules: list[RouteRule]) -> None:
    """In the scratch copy only: raw.events as the view of its files, remapped."""
    with connect(settings.warehouse_path) as con:
        refresh_events_view(con)
        [(body,)] = con.execute(
            "select sql from duckdb_views() where schema_name = 'raw' and view_name = 'events'"
        ).fetchall()
        select = body[body.lower().index(" as select") + 4 :].rstrip().rstrip(";")
        con.execute(
            "create or replace view raw.events as select * replace ("
            f"{_remap_sql(rules, 'provider')} as provider, {_remap_sql(rules, 'model')} as model"
            f") from ({select})"
        )


def _ledger_by_tenant(con, date_from: date | None, date_to: date | None) -> dict:
    where = []
    if date_from is not None:
        where.append(f"business_date >= {literal(date_from)}")
    if date_to is not None:
        where.append(f"business_date <= {literal(date_to)}")
    rows = con.execute(
        f"""
        select tenant_id, count(*), coalesce(sum(total_cost), 0), coalesce(sum(revenue), 0),
            any_value(currency)
        from marts.fct_session_ledger
        {"where " + " and ".join(where) if where else ""}
        group by tenant_id
        """
    ).fetchall()
    return {tenant: (sessions, cost, revenue, currency) for tenant, sessions, cost, revenue,
            currency in rows}  # fmt: skip


def what_if(
    settings: Settings,
    reference_dir: Path,
    *,
    route_map: Path | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
    scratch_dir: Path | None = None,
) -> WhatIf:
    """Reprice [date_from, date_to] (business dates) under `reference_dir` in a scratch copy."""
    from ledger.commands.build import run_dbt
    from ledger.pipeline.transform import prepare_reference

    rules = load_route_map(route_map) if route_map is not None else []
    with open_published(settings) as con:
        now = _ledger_by_tenant(con, date_from, date_to)
    if not now:
        raise WhatIfError(
            f"the published ledger has no session between {date_from or 'the start'} and "
            f"{date_to or 'the end'}: nothing to reprice"
        )
    root = Path(tempfile.mkdtemp(prefix="whatif-", dir=scratch_dir or settings.home))
    try:
        scratch = settings.model_copy(update={"home": root, "reference_dir": reference_dir})
        copy_warehouse(settings.warehouse_path, scratch.warehouse_path)
        with connect(scratch.warehouse_path) as con:
            prepare_reference(scratch, con)
        if rules:
            _apply_route_map(scratch, rules)
        run_dbt(scratch, ["run", "--select", "+fct_session_ledger"])
        with connect(scratch.warehouse_path, read_only=True) as con:
            candidate = _ledger_by_tenant(con, date_from, date_to)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    zero = Decimal(0)
    tenants = []
    for tenant in sorted(now.keys() | candidate.keys()):
        sessions, cost_now, revenue_now, _ = now.get(tenant, (0, zero, zero, None))
        _, cost_candidate, revenue_candidate, _ = candidate.get(tenant, (0, zero, zero, None))
        tenants.append(
            TenantWhatIf(tenant, sessions, cost_now, cost_candidate, revenue_now, revenue_candidate)
        )
    currency = next(iter(now.values()))[3] or settings.reporting_currency
    return WhatIf(
        reference_dir,
        reference_digest(reference_dir),
        route_map,
        date_from,
        date_to,
        currency,
        tenants,
    )


COLUMNS = (
    "tenant_id",
    "sessions",
    "cost_now",
    "cost_candidate",
    "cost_difference",
    "revenue_now",
    "revenue_candidate",
    "revenue_difference",
    "margin_now",
    "margin_candidate",
    "margin_difference",
)


def _values(row: TenantWhatIf) -> list:
    return [getattr(row, name) for name in COLUMNS]


def write_outputs(result: WhatIf, out_stem: Path) -> tuple[Path, Path]:
    """`<stem>.csv` (full precision) and `<stem>.xlsx` (shown to the cent), each naming the
    reference data it used."""
    import xlsxwriter

    out_stem.parent.mkdir(parents=True, exist_ok=True)
    named = [
        f"candidate reference data: {result.reference_dir} (sha256 {result.reference_digest})",
        f"route map: {result.route_map or 'none'}",
        f"business dates: {result.date_from or 'all'} to {result.date_to or 'all'}",
        f"currency: {result.currency}; difference = candidate - now",
    ]
    csv_path = out_stem.with_suffix(".csv")
    with csv_path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        for line in named:
            writer.writerow([f"# {line}"])
        writer.writerow(COLUMNS)
        for row in result.tenants:
            # A tenant id is text from the events: never a formula where the file is opened.
            writer.writerow(
                [
                    spreadsheet.cell(value) if isinstance(value, str) else str(value)
                    for value in _values(row)
                ]
            )
    xlsx_path = out_stem.with_suffix(".xlsx")
    workbook = xlsxwriter.Workbook(str(xlsx_path))
    bold = workbook.add_format({"bold": True})
    money = workbook.add_format({"num_format": "#,##0.00"})
    sheet = workbook.add_worksheet("whatif")
    for index, line in enumerate(named):
        sheet.write(index, 0, line)
    header = len(named) + 1
    for col, name in enumerate(COLUMNS):
        sheet.write(header, col, name, bold)
        sheet.set_column(col, col, max(12, len(name) + 4))
    for r, row in enumerate(result.tenants, start=header + 1):
        for c, value in enumerate(_values(row)):
            if isinstance(value, Decimal):
                # The cell shows the exact sum rounded half-even to the cent.
                sheet.write_number(r, c, float(round_money(value)), money)
            elif isinstance(value, str):
                sheet.write_string(r, c, value)
            else:
                sheet.write(r, c, value)
    workbook.close()
    return csv_path, xlsx_path
