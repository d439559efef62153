"""The week's reconciliation for the weekly review (SPEC 10): per provider and component, what the
rate card priced against what providers billed, over the UTC days of the ISO week, from
`marts.fct_reconciliation_daily` (only days with both priced usage and a reported cost)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

import duckdb

from ledger.serving.published_copy import has_mart


@dataclass(frozen=True)
class ReconciledWeek:
    provider: str
    component: str
    priced_cost: Decimal
    reported_cost: Decimal
    days: int
    drifting_days: int

    @property
    def difference(self) -> Decimal:
        return self.reported_cost - self.priced_cost

    @property
    def difference_pct(self) -> Decimal | None:
        if self.priced_cost == 0:
            return None
        return Decimal(100) * self.difference / self.priced_cost


RECONCILIATION_MART = "fct_reconciliation_daily"


def has_reconciliation(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the marts have the reconciliation yet (a warehouse built before it has not)."""
    return has_mart(con, RECONCILIATION_MART)


def load_reconciliation(
    con: duckdb.DuckDBPyConnection, first: date, last: date
) -> list[ReconciledWeek]:
    if not has_reconciliation(con):
        return []
    rows = con.execute(
        """
        select provider, component, sum(priced_cost), sum(reported_cost), count(*),
            count(*) filter (where is_over_tolerance)
        from marts.fct_reconciliation_daily
        where usage_date between ? and ?
        group by all
        order by provider, component
        """,
        [first, last],
    ).fetchall()
    return [ReconciledWeek(*row) for row in rows]
