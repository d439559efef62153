"""Rate card drift alerts (SPEC 10): what providers billed against what the ledger priced.

`marts.fct_reconciliation_daily` decides which UTC day x provider x component differs beyond the
tolerance (`is_over_tolerance`); this module turns each such row into a notification through the
same delivery as the cost anomalies (`ops.deliveries`, the same sinks and retries) under the same
cooldown rule: a fingerprint already notified for a date less than the cooldown away is not sent
again unless its severity rose. The fingerprint is the drift's own (provider, component and
direction, not the date), so a stale price that lasts a week is one notification.

Every drift found, sent or not, is kept in `ops.rate_card_drifts`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

import duckdb

from ledger.alerts.delivery import (
    DEFAULT_COOLDOWN_DAYS,
    SEVERITY_ICON,
    Sink,
    deliver,
    held_by_cooldown,
)
from ledger.alerts.detection import _digest, fingerprint
from ledger.alerts.store import (
    COOLDOWN,
    PENDING_RETRY,
    SENT,
    Delivery,
    DeliveryItem,
    new_id,
)
from ledger.core.numbers import money, percent, signed_money
from ledger.escaping import slack
from ledger.serving.links import board_link
from ledger.serving.published_copy import has_mart

DRIFT_METRIC = "rate_card_drift"
DRIFT_KIND = "rate_card_drift"
# A bill this far off the ledger is more than a rounding or a late price change.
CRITICAL_PCT = Decimal(10)

_DDL = (
    "create schema if not exists ops",
    """
    create table if not exists ops.rate_card_drifts (
        drift_id varchar primary key,
        fingerprint varchar not null,
        usage_date date not null,
        provider varchar not null,
        component varchar not null,
        model varchar,
        currency varchar not null,
        priced_cost decimal(38, 12) not null,
        reported_cost decimal(38, 12) not null,
        difference decimal(38, 12) not null,
        difference_pct decimal(38, 6),
        model_difference decimal(38, 12),
        severity varchar not null,
        notification varchar,
        first_detected_at timestamp not null,
        last_detected_at timestamp not null
    )
    """,
)


@dataclass(frozen=True)
class Drift:
    usage_date: date
    provider: str
    component: str
    currency: str
    priced_cost: Decimal
    reported_cost: Decimal
    difference: Decimal
    difference_pct: Decimal | None
    model: str | None
    model_difference: Decimal | None

    @property
    def direction(self) -> str:
        return "up" if self.difference > 0 else "down"

    @property
    def fingerprint(self) -> str:
        return fingerprint(f"provider:{self.provider}", f"{DRIFT_METRIC}:{self.component}",
                           self.direction)  # fmt: skip

    @property
    def drift_id(self) -> str:
        return _digest(f"{self.fingerprint}|{self.usage_date.isoformat()}")

    @property
    def severity(self) -> str:
        big = self.difference_pct is None or abs(self.difference_pct) >= CRITICAL_PCT
        return "critical" if big else "warning"

    def line(self, written: Callable[[object], str] = str) -> str:
        """One sentence: size, provider, component and the model most likely mispriced; `written`
        turns the provider and model into the text of the medium it goes to (ledger.escaping)."""
        side = "above" if self.difference > 0 else "below"
        share = percent(abs(self.difference_pct)) if self.difference_pct is not None else "-"
        text = (
            f"{SEVERITY_ICON[self.severity]} *{written(self.provider)} {self.component}* billed "
            f"{money(self.reported_cost, self.currency)} against "
            f"{money(self.priced_cost, self.currency)} priced by the rate card: "
            f"{signed_money(self.difference, self.currency)} ({share} {side})"
        )
        if self.model is not None:
            text += (
                f". Likely stale price: {written(self.provider)}/{written(self.model)} "
                f"({signed_money(self.model_difference, self.currency)})"
            )
        return text


@dataclass
class DriftOutcome:
    drifts: list[Drift] = field(default_factory=list)
    sent: int = 0
    failed: int = 0
    suppressed: int = 0

    def summary(self) -> str:
        return (
            f"{len(self.drifts)} rate card drifts found, {self.sent} notified, "
            f"{self.suppressed} held by the cooldown"
            + (f", {self.failed} failed (retried next run)" if self.failed else "")
        )


def find_drifts(con: duckdb.DuckDBPyConnection, day: date) -> list[Drift]:
    """Reconciliation rows of `day` over the tolerance; none before the mart exists."""
    if not has_mart(con, "fct_reconciliation_daily"):
        return []
    rows = con.execute(
        """
        select usage_date, provider, component, currency, priced_cost, reported_cost,
            difference, difference_pct, top_model, top_model_difference
        from marts.fct_reconciliation_daily
        where usage_date = ? and is_over_tolerance
        order by abs(difference) desc, provider, component
        """,
        [day],
    ).fetchall()
    return [Drift(*row) for row in rows]


def drift_message(drift: Drift, escalated: bool, link: str) -> dict:
    """The drift's message, with `link` to the boards' anomaly inbox on its day."""
    headline = (
        f"[{drift.severity.upper()}] rate card drift {drift.usage_date.isoformat()} (UTC day): "
        f"{slack.escape(drift.provider)} {drift.component} "
        f"{percent(drift.difference_pct, signed=True)}"
    )
    if escalated:
        headline += " (escalated)"
    advice = (
        "The provider billed a different amount than the rate card prices: check its price "
        "(`ledger rates import` proposes catalogue prices; `ledger rates check` lists gaps)."
    )
    return {
        "text": f"{headline} {link}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline}*"}},
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": f"{drift.line(slack.escape)}\n{advice}"},
            },
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": slack.link(link, "Open in the boards")},
            },
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": f"voice ledger rate card drift | fingerprint {drift.fingerprint}",
                    }
                ],
            },
        ],
    }


def _record(con: duckdb.DuckDBPyConnection, drift: Drift, now: datetime, notification: str) -> None:
    con.execute(
        """
        insert into ops.rate_card_drifts values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        on conflict (drift_id) do update set
            priced_cost = excluded.priced_cost, reported_cost = excluded.reported_cost,
            difference = excluded.difference, difference_pct = excluded.difference_pct,
            model = excluded.model, model_difference = excluded.model_difference,
            severity = excluded.severity,
            notification = case when ops.rate_card_drifts.notification in ('sent', 'pending_retry')
                then ops.rate_card_drifts.notification else excluded.notification end,
            last_detected_at = excluded.last_detected_at
        """,
        [
            drift.drift_id,
            drift.fingerprint,
            drift.usage_date,
            drift.provider,
            drift.component,
            drift.model,
            drift.currency,
            drift.priced_cost,
            drift.reported_cost,
            drift.difference,
            drift.difference_pct,
            drift.model_difference,
            drift.severity,
            notification,
            now,
            now,
        ],
    )


def notify_drifts(
    con: duckdb.DuckDBPyConnection,
    sink: Sink,
    day: date,
    now: datetime,
    run_id: str,
    cooldown_days: int = DEFAULT_COOLDOWN_DAYS,
    *,
    boards_url: str,
) -> DriftOutcome:
    """Find `day`'s drifts, record them all, notify those the cooldown lets through (each with
    its link to the boards' anomaly inbox at `boards_url`)."""
    for statement in _DDL:
        con.execute(statement)
    outcome = DriftOutcome(find_drifts(con, day))
    for drift in outcome.drifts:
        held, escalated = held_by_cooldown(
            con, drift.fingerprint, drift.usage_date, drift.severity, cooldown_days
        )
        if held:
            _record(con, drift, now, COOLDOWN)
            outcome.suppressed += 1
            continue
        delivery = Delivery(
            delivery_id=new_id(),
            kind=DRIFT_KIND,
            tenant_id=None,
            business_date=drift.usage_date,
            severity=drift.severity,
            payload=drift_message(
                drift,
                escalated=escalated,
                link=board_link(
                    boards_url, "anomalies", {"from": drift.usage_date, "to": drift.usage_date}
                ),
            ),
            items=[DeliveryItem(drift.fingerprint, None, drift.severity, drift.usage_date)],
        )
        sent = deliver(con, sink, delivery, now, run_id)
        _record(con, drift, now, SENT if sent else PENDING_RETRY)
        if sent:
            outcome.sent += 1
        else:
            outcome.failed += 1
    return outcome
