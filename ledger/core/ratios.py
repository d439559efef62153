"""Ratios in Python, exact: for the few places that divide sums outside dbt (the boards' ad-hoc
filter combinations, the alerts' baselines). dbt divides with the macros of
`dbt/macros/exact_arithmetic.sql`; both take the numerator and denominator a mart carries.

    >>> ratio(1, 3)
    Decimal('0.3333333333333333333333333333')
    >>> percentage(Decimal("-0.1"), Decimal("0.3"))
    Decimal('-33.333333')
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

# The scale of a percentage in the marts (dbt macro `percentage`: 6 places, half away from zero).
PERCENT_PLACES = Decimal("0.000001")


def ratio(numerator: Decimal | int | None, denominator: Decimal | int | None) -> Decimal | None:
    """numerator / denominator as Decimal; None when either is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return Decimal(numerator) / Decimal(denominator)


def percentage(
    numerator: Decimal | int | None, denominator: Decimal | int | None
) -> Decimal | None:
    """100 x numerator / denominator, rounded to 6 places half away from zero (as the marts)."""
    share = ratio(numerator, denominator)
    if share is None:
        return None
    return (100 * share).quantize(PERCENT_PLACES, rounding=ROUND_HALF_UP)


def gross_margin_pct(revenue: Decimal | None, total_cost: Decimal | None) -> Decimal | None:
    """SPEC 8: 100 x (revenue - total cost) / revenue; None without revenue."""
    if revenue is None or total_cost is None:
        return None
    return percentage(revenue - total_cost, revenue)
