"""Spend budget alerts (SPEC 13): a tenant's month at 80% and at 100% of its budget, on the actual
month to date and on the forecast to the month's end (ledger/finops/spend_budgets.py), delivered
like the cost anomalies (to the default destination: finance's).

Each (budget, basis, threshold) is one fingerprint, so a crossing is notified once in its month
(the cooldown spans a month) and reaching 100% after 80% is a new notification. Every crossing
found is kept in `ops.spend_budget_alerts`, sent or not; notifications are `ops.deliveries` of kind
`spend_budget`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

import duckdb

from ledger.alerts.delivery import deliver, held_by_cooldown
from ledger.alerts.detection import _digest, fingerprint
from ledger.alerts.routing import Router, linked_message
from ledger.alerts.store import COOLDOWN, SENT, Delivery, DeliveryItem, new_id
from ledger.core.numbers import money, percent
from ledger.core.settings import Settings
from ledger.escaping import slack
from ledger.finops.spend_budgets import BASES, SpendBudget, spend_budgets
from ledger.serving.links import board_link

KIND = "spend_budget"
COOLDOWN_DAYS = 31
SEVERITY = {
    ("actual", Decimal(100)): "critical",
    ("actual", Decimal(80)): "warning",
    ("forecast", Decimal(100)): "warning",
    ("forecast", Decimal(80)): "info",
}

_DDL = """
create table if not exists ops.spend_budget_alerts (
    alert_id varchar primary key,
    fingerprint varchar not null,
    tenant_id varchar not null,
    provider varchar,
    budget_month date not null,
    basis varchar not null,
    threshold_pct integer not null,
    budget_amount decimal(38, 12) not null,
    month_to_date decimal(38, 12) not null,
    forecast decimal(38, 12) not null,
    forecast_low decimal(38, 12) not null,
    forecast_high decimal(38, 12) not null,
    currency varchar not null,
    as_of date not null,
    notification varchar,
    detected_at timestamp not null
)
"""


@dataclass(frozen=True)
class Crossing:
    budget: SpendBudget
    basis: str
    threshold: Decimal

    @property
    def fingerprint(self) -> str:
        b = self.budget
        return fingerprint(
            f"spend:{b.tenant_id}:{b.provider or '*'}:{b.month:%Y-%m}",
            f"{self.basis}_budget",
            str(self.threshold),
        )

    @property
    def alert_id(self) -> str:
        return _digest(f"{self.fingerprint}|{self.budget.as_of.isoformat()}")


@dataclass
class SpendAlertResult:
    crossings: list[Crossing] = field(default_factory=list)
    sent: list[Delivery] = field(default_factory=list)
    failed: int = 0
    held: int = 0

    @property
    def lines(self) -> list[str]:
        lines = [
            f"spend budgets: {len(self.crossings)} at 80% or more (actual or forecast), "
            f"{len(self.sent)} notifications sent, {self.held} held by the cooldown"
        ]
        if self.failed:
            lines.append(f"{self.failed} spend notifications failed: retried on the next run")
        return lines


def budget_link(settings: Settings, budget: SpendBudget) -> str:
    return board_link(
        settings.boards_url,
        "budgets",
        {"tenant": budget.tenant_id, "month": f"{budget.month:%Y-%m}", "provider": budget.provider},
    )


def spend_message(settings: Settings, crossing: Crossing) -> dict:
    b, o = crossing.budget, crossing.budget.outlook
    what = "spent" if crossing.basis == "actual" else "forecast to spend"
    headline = (
        f"[BUDGET {crossing.threshold}%] {slack.escape(b.scope)} {b.month:%Y-%m}: {what} "
        f"{percent(b.pct(crossing.basis))} of the budget"
    )
    detail = (
        f"Budget {money(b.budget, b.currency)}. Spent {money(o.month_to_date, b.currency)} "
        f"to {b.as_of.isoformat()}; forecast to the month's end {money(o.forecast, b.currency)} "
        f"(between {money(o.low)} and {money(o.high)}, weekday-aware, {o.days_remaining} days "
        "to go)"
    )
    return linked_message(
        headline,
        detail,
        budget_link(settings, b),
        "Open the budget",
        f"voice ledger spend budget | fingerprint {crossing.fingerprint}",
    )


def _record(
    con: duckdb.DuckDBPyConnection, crossing: Crossing, now: datetime, outcome: str
) -> None:
    b, o = crossing.budget, crossing.budget.outlook
    con.execute(
        """
        insert into ops.spend_budget_alerts values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        on conflict (alert_id) do update set notification = case
            when ops.spend_budget_alerts.notification = 'sent' then 'sent'
            else excluded.notification end
        """,
        [
            crossing.alert_id,
            crossing.fingerprint,
            b.tenant_id,
            b.provider,
            b.month,
            crossing.basis,
            int(crossing.threshold),
            b.budget,
            o.month_to_date,
            o.forecast,
            o.low,
            o.high,
            b.currency,
            b.as_of,
            outcome,
            now,
        ],
    )


def notify_spend_budgets(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    router: Router,
    as_of: date,
    now: datetime,
    run_id: str,
) -> SpendAlertResult:
    con.execute(_DDL)
    result = SpendAlertResult()
    for budget in spend_budgets(con, as_of):
        for basis in BASES:
            threshold = budget.crossed(basis)
            if threshold is not None:
                result.crossings.append(Crossing(budget, basis, threshold))
    for crossing in result.crossings:
        severity = SEVERITY[crossing.basis, crossing.threshold]
        held, _ = held_by_cooldown(con, crossing.fingerprint, as_of, severity, COOLDOWN_DAYS)
        if held:
            result.held += 1
            _record(con, crossing, now, COOLDOWN)
            continue
        delivery = Delivery(
            delivery_id=new_id(),
            kind=KIND,
            tenant_id=crossing.budget.tenant_id,
            business_date=as_of,
            severity=severity,
            payload=spend_message(settings, crossing),
            items=[DeliveryItem(crossing.fingerprint, None, severity, as_of)],
        )
        if deliver(con, router.sink_for(None), delivery, now, run_id):
            _record(con, crossing, now, SENT)
            result.sent.append(delivery)
        else:
            _record(con, crossing, now, "pending_retry")
            result.failed += 1
    return result
