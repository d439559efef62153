"""The headline cells Overview and Margin share: revenue, cost, gross margin and its percentage,
each with its change against the comparison period."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dashboards.formatting import money, money_delta, percent, points_delta
from dashboards.kpis import PeriodKpis

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

    from dashboards.comparison import Comparison


def margin_cells(
    cells: Sequence[DeltaGenerator],
    now: PeriodKpis,
    before: PeriodKpis,
    comparison: Comparison,
    currency: str,
) -> None:
    """Revenue, cost, gross margin and gross margin % in the four `cells`."""
    cells[0].metric(
        "Revenue",
        money(now.revenue, currency),
        comparison.delta(money_delta(now.revenue, before.revenue, currency)),
        help="Revenue of the closed, billed sessions.",
    )
    cells[1].metric(
        "Cost",
        money(now.total_cost, currency),
        comparison.delta(money_delta(now.total_cost, before.total_cost, currency)),
        delta_color="inverse",
        help="Cost of every session, open ones included.",
    )
    cells[2].metric(
        "Gross margin",
        money(now.gross_margin, currency),
        comparison.delta(money_delta(now.gross_margin, before.gross_margin, currency)),
        help="Revenue − cost.",
    )
    cells[3].metric(
        "Gross margin %",
        percent(now.gross_margin_pct, 2),
        comparison.delta(points_delta(now.gross_margin_pct, before.gross_margin_pct)),
        help="(Revenue − cost) ÷ revenue.",
    )
