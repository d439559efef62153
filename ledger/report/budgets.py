"""The weekly review's SPEC 13 sections: the spend budgets of the week's month (actual and
forecast, ledger/finops/spend_budgets.py) and the latency leverage (marts.fct_latency_leverage)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

import duckdb

from ledger.alerts.figures import latest_closed_business_date
from ledger.finops.spend_budgets import SpendBudget, spend_budgets
from ledger.report.tables import Cell, Column, Table
from ledger.report.weekly import WeeklyReview
from ledger.serving.published_copy import has_mart


@dataclass(frozen=True)
class Leverage:
    tenant_id: str
    profile: str
    rank: int
    segment: str
    owner: str | None
    p95_share_pct: Decimal
    p50_share_pct: Decimal
    budget_share_pct: Decimal


def load_spend_budgets(
    con: duckdb.DuckDBPyConnection, week_end: date, timezone: str
) -> list[SpendBudget]:
    """The budgets of the month the week ends in, seen on its last day (or the newest closed
    day, if the week is not over in the data)."""
    if not has_mart(con, "dim_spend_budgets"):
        return []
    closed = latest_closed_business_date(con, timezone)
    return spend_budgets(con, min(week_end, closed) if closed else week_end)


def _pct(value: float | None) -> Decimal:
    # DOUBLE shares of latency (not money): shown to one place, so 4 places are plenty.
    return (Decimal(repr(value or 0)) * 100).quantize(Decimal("0.0001"))


def load_leverage(con: duckdb.DuckDBPyConnection) -> list[Leverage]:
    if not has_mart(con, "fct_latency_leverage"):
        return []
    rows = con.execute(
        """
        select tenant_id, profile, p95_rank, segment, owner, p95_share, p50_share, budget_share
        from marts.fct_latency_leverage
        order by tenant_id, profile, p95_rank, segment_order
        """
    ).fetchall()
    return [
        Leverage(tenant, profile, rank, segment, owner, _pct(p95), _pct(p50), _pct(budget))
        for tenant, profile, rank, segment, owner, p95, p50, budget in rows
    ]


def spend_budgets_table(review: WeeklyReview) -> Table:
    rows: list[list[Cell]] = [
        [
            b.tenant_id,
            b.provider or "all providers",
            f"{b.month:%Y-%m}",
            b.budget,
            b.outlook.month_to_date,
            b.pct("actual"),
            b.outlook.forecast,
            b.outlook.low,
            b.outlook.high,
            b.pct("forecast"),
        ]
        for b in review.spend_budgets
    ]
    as_of = review.spend_budgets[0].as_of.isoformat() if review.spend_budgets else ""
    return Table(
        "spend_budgets",
        "Spend budgets",
        (
            Column("tenant"),
            Column("provider"),
            Column("month"),
            Column("budget", "money"),
            Column("spent", "money"),
            Column("spent of budget", "pct"),
            Column("forecast", "money"),
            Column("forecast from", "money"),
            Column("forecast to", "money"),
            Column("forecast of budget", "pct"),
        ),
        rows,
        note=f"Spent to {as_of}; the forecast adds, for each day left in the month, the mean "
        "spend of its weekday so far (the interval: its cheapest and dearest such day). Alerts go "
        "out at 80% and 100% of a budget, actual or forecast."
        if rows
        else "No spend budgets for this month (spend_budgets.csv).",
    )


def leverage_table(review: WeeklyReview) -> Table:
    rows: list[list[Cell]] = [
        [x.tenant_id, x.profile, x.rank, x.segment, x.owner or "-", x.p95_share_pct,
         x.p50_share_pct, x.budget_share_pct]
        for x in review.leverage
    ]  # fmt: skip
    return Table(
        "leverage",
        "Latency leverage",
        (
            Column("tenant"),
            Column("profile"),
            Column("rank (P95)", "int"),
            Column("segment"),
            Column("owner"),
            Column("share of time at P95", "pct"),
            Column("share of time at P50", "pct"),
            Column("share of the first-audio budget", "pct"),
        ),
        rows,
        note="Each segment's share of the five segments' P95 (P50) on complete turns over the "
        "latency SLO window: where a millisecond saved matters most comes first."
        if rows
        else "No complete turns in the latency SLO window.",
    )
