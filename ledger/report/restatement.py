"""Restatements: what a report said about a week, and what the marts say now.

Each weekly review snapshots the figures it published per tenant in `ops.reported_weeks`. The next
review compares every week ever reported with the marts; late events that changed a reported week
appear as restatements (old and new figures), are kept in `ops.restatements`, and the snapshot is
renewed so a change is listed once: by the review that found it, and by that review again when it is
run again (`reported_in`), never by a later week's.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import duckdb

from ledger.core.vocabulary import COMPONENT_LABELS
from ledger.report.weekly import COUNT_FIELDS, MONEY_FIELDS, Restatement, TenantWeek, _load_weeks

# The figures a restatement is about (the rest follow from them): the component costs, then the
# totals. Interruption waste is also a `_cost` money field; it is listed once, after the margin.
RESTATED_FIELDS: tuple[str, ...] = (
    "session_count",
    "revenue",
    *(
        name
        for name in MONEY_FIELDS
        if name.endswith("_cost") and name not in ("total_cost", "interruption_waste_cost")
    ),
    "total_cost",
    "gross_margin",
    "interruption_waste_cost",
    "cache_savings",
)
ZERO = Decimal(0)


def ensure_report_schema(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("create schema if not exists ops")
    # Snapshots are ordered by a sequence, not a clock: two reports in the same instant (or a
    # clock set back) still have a newest one.
    con.execute("create sequence if not exists ops.reported_weeks_seq start 1")
    money_columns = ", ".join(f"{name} decimal(38, 12)" for name in MONEY_FIELDS)
    count_columns = ", ".join(f"{name} bigint" for name in COUNT_FIELDS)
    con.execute(
        f"""
        create table if not exists ops.reported_weeks (
            snapshot_id bigint not null,
            iso_week varchar not null,
            tenant_id varchar not null,
            snapshot_at timestamp not null,
            reported_in_week varchar not null,
            billable_minutes decimal(38, 12),
            {money_columns},
            {count_columns}
        )
        """
    )
    con.execute(
        """
        create table if not exists ops.restatements (
            found_at timestamp not null,
            found_in_report_week varchar not null,
            iso_week varchar not null,
            tenant_id varchar not null,
            figure varchar not null,
            old_value decimal(38, 12),
            new_value decimal(38, 12)
        )
        """
    )


def _latest_snapshots(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, dict[str, Decimal]]]:
    """iso_week -> tenant -> figure -> value, from each (week, tenant)'s newest snapshot."""
    cursor = con.execute(
        f"""
        select iso_week, tenant_id, {", ".join(RESTATED_FIELDS)}
        from ops.reported_weeks
        qualify row_number() over (partition by iso_week, tenant_id order by snapshot_id desc) = 1
        """
    )
    snapshots: dict[str, dict[str, dict[str, Decimal]]] = {}
    for row in cursor.fetchall():
        snapshots.setdefault(row[0], {})[row[1]] = {
            name: Decimal(value or 0) for name, value in zip(RESTATED_FIELDS, row[2:], strict=True)
        }
    return snapshots


def compare(
    reported: dict[str, dict[str, Decimal]], current: list[TenantWeek], iso_week: str
) -> list[Restatement]:
    """Every figure of `iso_week` that differs (exactly) from what was reported."""
    now = {w.tenant_id: {name: w[name] for name in RESTATED_FIELDS} for w in current}
    changes = []
    for tenant in sorted(set(reported) | set(now)):
        old = reported.get(tenant, {})
        new = now.get(tenant, {})
        for name in RESTATED_FIELDS:
            before, after = old.get(name, ZERO), new.get(name, ZERO)
            if before != after:
                changes.append(Restatement(iso_week, tenant, name, before, after))
    return changes


def _snapshot(
    con: duckdb.DuckDBPyConnection,
    iso_week: str,
    weeks: list[TenantWeek],
    reported_in: str,
    now: datetime,
) -> None:
    names = MONEY_FIELDS + COUNT_FIELDS
    for week in weeks:
        con.execute(
            f"insert into ops.reported_weeks (snapshot_id, iso_week, tenant_id, snapshot_at, "
            f"reported_in_week, billable_minutes, {', '.join(names)}) values "
            f"(nextval('ops.reported_weeks_seq'), ?, ?, ?, ?, ?, {', '.join('?' for _ in names)})",
            [iso_week, week.tenant_id, now, reported_in, week.billable_minutes]
            + [week[name] for name in names],
        )


def find_restatements_and_snapshot(
    con: duckdb.DuckDBPyConnection,
    report_week: str,
    report_tenants: list[TenantWeek],
    now: datetime,
) -> list[Restatement]:
    """Restatements of every reported week, then snapshot what this report publishes."""
    ensure_report_schema(con)
    snapshots = _latest_snapshots(con)
    restatements: list[Restatement] = []
    for iso_week in sorted(snapshots):
        current = report_tenants if iso_week == report_week else _load_weeks(con, iso_week)
        changes = compare(snapshots[iso_week], current, iso_week)
        if changes:
            restatements += changes
            for change in changes:
                con.execute(
                    "insert into ops.restatements values (?, ?, ?, ?, ?, ?, ?)",
                    [
                        now,
                        report_week,
                        change.iso_week,
                        change.tenant_id,
                        change.figure,
                        change.old,
                        change.new,
                    ],
                )
            if iso_week != report_week:
                _snapshot(con, iso_week, current, report_week, now)
    if report_week not in snapshots or any(r.iso_week == report_week for r in restatements):
        _snapshot(con, report_week, report_tenants, report_week, now)
    return reported_in(con, report_week)


def restatements_sql(table: str, where: str = "true") -> str:
    """Each restated figure once per review that found it: from the value first reported to the
    newest one (a figure that went back to its reported value drops out). The review reads
    `ops.restatements`, the boards the published copy of it (`marts.review_restatements`)."""
    return f"""
        select * from (
            select
                found_in_report_week,
                iso_week,
                tenant_id,
                figure,
                arg_min(old_value, found_at) as old_value,
                arg_max(new_value, found_at) as new_value
            from {table}
            where {where}
            group by found_in_report_week, iso_week, tenant_id, figure
        )
        where old_value is distinct from new_value
    """


def figure_label(figure: str) -> str:
    """A restated figure as people name it: `LLM cost`, `sessions`, `gross margin`."""
    component = figure.removesuffix("_cost")
    if component in COMPONENT_LABELS:
        return f"{COMPONENT_LABELS[component]} cost"
    return {"session_count": "sessions", "total_cost": "cost"}.get(
        figure, figure.removesuffix("_cost").replace("_", " ")
    )


def reported_in(con: duckdb.DuckDBPyConnection, report_week: str) -> list[Restatement]:
    """Every restatement the review of `report_week` has found, over all its runs: a review run
    again (a resend, a late rerun) still lists what it reported, each figure once, from the value
    first reported to the newest one (a figure that went back to its reported value drops out)."""
    rows = [
        row[1:]
        for row in con.execute(
            restatements_sql("ops.restatements", "found_in_report_week = ?"), [report_week]
        ).fetchall()
    ]
    order = {name: rank for rank, name in enumerate(RESTATED_FIELDS)}

    def value(figure: str, stored: Decimal) -> Decimal:
        # Stored as decimal(38, 12); a count reads back as the whole number it was reported as.
        return Decimal(int(stored)) if figure in COUNT_FIELDS else stored

    found = [
        Restatement(iso_week, tenant, figure, value(figure, old), value(figure, new))
        for iso_week, tenant, figure, old, new in rows
        if old != new
    ]
    return sorted(found, key=lambda r: (r.iso_week, r.tenant_id, order.get(r.figure, len(order))))
