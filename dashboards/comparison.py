"""Change against the previous period, said the same way on every page.

The comparison period is the one of the same length just before the selected one. It is named
wherever a change is shown, and flagged when the ledger does not cover it in full:

- `empty`: the comparison period lies wholly outside the ledger's dates: no change is shown
  (a change against nothing is not a change);
- `partial`: the ledger starts (or ends) inside one of the two periods: the change is shown with
  the mark ` · partial` and the note says which dates are missing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal
from typing import Literal

import pandas as pd

from dashboards.filters import Filters, PageContext
from ledger.core.numbers import round_money, round_to

PARTIAL_MARK = " · partial"
Coverage = Literal["full", "partial", "empty"]


def _coverage(date_from: date, date_to: date, first: date, last: date) -> Coverage:
    if date_to < first or date_from > last:
        return "empty"
    if date_from < first or date_to > last:
        return "partial"
    return "full"


def _span(date_from: date, date_to: date) -> str:
    if date_from == date_to:
        return f"{date_from:%Y-%m-%d}"
    return f"{date_from:%Y-%m-%d} to {date_to:%Y-%m-%d}"


@dataclass(frozen=True)
class Comparison:
    current: Filters
    previous: Filters
    first_date: date | None  # the ledger's first and last business dates with data
    last_date: date | None
    # Sessions the comparison period holds under the filters, once a page has counted them.
    previous_sessions: int | None = None

    @classmethod
    def of(cls, context: PageContext) -> Comparison:
        filters = context.filters
        return cls(
            filters,
            filters.previous(),
            context.publication.first_date,
            context.publication.last_date,
        )

    def counted(self, previous_sessions: int) -> Comparison:
        """The same comparison, knowing how many sessions the comparison period holds."""
        return replace(self, previous_sessions=int(previous_sessions))

    @property
    def coverage(self) -> Coverage:
        """The worse coverage of the two periods (a partial current period skews a change too);
        empty also when the filters find no session in the comparison period."""
        if self.previous_sessions == 0:
            return "empty"
        return self._dated_coverage

    def tenant_changes(
        self,
        rows: pd.DataFrame,
        earlier: pd.DataFrame,
        column: str,
        totals: tuple[object, object] | None = None,
    ) -> list[Decimal | None]:
        """Each row's change of `column` against its tenant's row of `earlier` (the comparison
        period, indexed by tenant_id), rounded to the cent; None where it cannot be said (an
        empty comparison, or no value on either side).

        A tenant without sessions (or without that figure) on one side counts 0 there, so that
        with `totals` (the headline's now and before) the changes add up to the headline change
        shown (now shown minus before shown): rounded half-even, the fewest moved by a cent
        (largest remainder, `ledger.core.numbers.round_to`).
        """
        if self.coverage == "empty":
            return [None] * len(rows)
        exact: list[Decimal | None] = []
        for tenant, current in zip(rows["tenant_id"], rows[column], strict=True):
            before = earlier.at[tenant, column] if tenant in earlier.index else None
            sides = [None if v is None or pd.isna(v) else Decimal(v) for v in (current, before)]
            exact.append(None if sides == [None, None] else (sides[0] or 0) - (sides[1] or 0))
        if totals is None:
            return [round_money(v) for v in exact]
        now, then = (Decimal(0) if v is None or pd.isna(v) else Decimal(v) for v in totals)
        if sum(v for v in exact if v is not None) != now - then:
            # Some of the change lies outside these rows: round each on its own.
            return [round_money(v) for v in exact]
        return round_to(exact, round_money(now) - round_money(then))

    @property
    def _dated_coverage(self) -> Coverage:
        if self.first_date is None or self.last_date is None:
            return "empty"
        kinds = {
            _coverage(f.date_from, f.date_to, self.first_date, self.last_date)
            for f in (self.current, self.previous)
        }
        return "empty" if "empty" in kinds else "partial" if "partial" in kinds else "full"

    def delta(self, text: str | None) -> str | None:
        """A change as a metric delta: none for an empty comparison, marked when partial."""
        if text is None or self.coverage == "empty":
            return None
        return text + PARTIAL_MARK if self.coverage == "partial" else text

    def column(self, name: str) -> str:
        """Header of a change column, marked like a delta: `Revenue change · partial`; its
        tooltip (`note`) names the comparison period."""
        return name + PARTIAL_MARK if self.coverage == "partial" else name

    def note(self) -> str:
        """One sentence naming the comparison period and its coverage."""
        text = f"Changes are against {_span(self.previous.date_from, self.previous.date_to)}"
        if self.coverage == "empty":
            if self._dated_coverage != "empty":
                return text + ": no session then under these filters, so no change is shown."
            return (
                text + f": the ledger has no data then (it covers "
                f"{_span(self.first_date, self.last_date)}), so no change is shown."
            )
        if self.coverage == "partial":
            missing = []
            for which, period in (("comparison", self.previous), ("selected", self.current)):
                if period.date_from < self.first_date:
                    before = self.first_date - timedelta(days=1)
                    missing.append(
                        f"the {which} period has no data before {self.first_date:%Y-%m-%d} "
                        f"({_span(period.date_from, min(before, period.date_to))} missing)"
                    )
                if period.date_to > self.last_date:
                    missing.append(
                        f"the {which} period has no data after {self.last_date:%Y-%m-%d}"
                    )
            return text + " (marked partial): " + "; ".join(missing) + "."
        return text + "."


def week_label(iso_week: str, week_start: date, covered_from: date, covered_to: date) -> str:
    """`2025-W11 (Mar 10–16)`, and `… · partial, 2 of 7 days` when only part of the week is in
    the selected dates and the ledger's data (a partial week must not read as a full one)."""
    week_end = week_start + timedelta(days=6)
    label = f"{iso_week} ({week_start:%b %d}–{week_end:%b %d})"
    days = (min(week_end, covered_to) - max(week_start, covered_from)).days + 1
    if days < 7:
        label += f" · partial, {max(days, 0)} of 7 days"
    return label


def covered(comparison: Comparison) -> tuple[date, date]:
    """The days of the selected period the ledger has data for."""
    period = comparison.current
    first = comparison.first_date or period.date_from
    last = comparison.last_date or period.date_to
    return max(period.date_from, first), min(period.date_to, last)
