"""The headline figures of a period, derived exactly (Decimal) from summed ledger amounts."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pandas as pd

from ledger.core.ratios import gross_margin_pct, ratio


def _decimal(value: object) -> Decimal | None:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    return Decimal(value)


@dataclass(frozen=True)
class PeriodKpis:
    sessions: int
    revenue: Decimal | None
    total_cost: Decimal
    billable_minutes: Decimal | None
    interruption_waste_cost: Decimal
    cache_savings: Decimal

    @classmethod
    def from_totals(cls, totals: pd.DataFrame) -> PeriodKpis:
        row = totals.iloc[0]
        return cls(
            sessions=int(row["sessions"]),
            revenue=_decimal(row["revenue"]),
            total_cost=_decimal(row["total_cost"]) or Decimal(0),
            billable_minutes=_decimal(row["billable_minutes"]),
            interruption_waste_cost=_decimal(row["interruption_waste_cost"]) or Decimal(0),
            cache_savings=_decimal(row["cache_savings"]) or Decimal(0),
        )

    @property
    def gross_margin(self) -> Decimal | None:
        """Revenue of billed sessions - cost of every session (as the margin marts define it)."""
        return None if self.revenue is None else self.revenue - self.total_cost

    @property
    def gross_margin_pct(self) -> Decimal | None:
        return margin_pct(self.revenue, self.total_cost)

    @property
    def cost_per_billable_minute(self) -> Decimal | None:
        return ratio(self.total_cost, self.billable_minutes)


def margin_pct(revenue: object, total_cost: object) -> Decimal | None:
    """100 x (revenue - cost) / revenue; None when revenue is unknown or 0."""
    revenue, total_cost = _decimal(revenue), _decimal(total_cost)
    if revenue is None or total_cost is None:
        return None
    return gross_margin_pct(revenue, total_cost)
