"""The weekly review's sections in the order every document shows them: the tables of
`ledger.report.tables`, then SPEC 13's spend budgets and leverage (`ledger.report.budgets`, which
builds on the same `Table`)."""

from __future__ import annotations

from ledger.report.budgets import leverage_table, spend_budgets_table
from ledger.report.tables import (
    Table,
    anomalies_table,
    capacity_table,
    components_table,
    data_quality_table,
    drivers_table,
    margin_table,
    quarantine_table,
    reconciliation_table,
    restatements_table,
    waste_savings_table,
    week_over_week_table,
)
from ledger.report.weekly import WeeklyReview


def review_tables(review: WeeklyReview) -> list[Table]:
    return [
        margin_table(review),
        components_table(review),
        week_over_week_table(review),
        drivers_table(review),
        waste_savings_table(review),
        anomalies_table(review),
        data_quality_table(review),
        quarantine_table(review),
        restatements_table(review),
        reconciliation_table(review),
        capacity_table(review),
        spend_budgets_table(review),
        leverage_table(review),
    ]
