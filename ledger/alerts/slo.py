"""Latency SLO burn-rate alerts (SPEC 13): on every refresh, the SLOs whose multi-window rule fires
(marts.fct_latency_burn_rates) are notified to the segment's owner team.

Per SLO (profile, tenant, segment) the most severe firing rule speaks: a page before a ticket, then
the rule listed first. Its fingerprint is the SLO and the severity, so the cooldown holds the same
alert back for a day (a refresh every few minutes sends it once) while a ticket that becomes a page
goes out at once as an escalation. Every firing SLO is kept in `ops.slo_alerts`, sent or not;
notifications are `ops.deliveries` of kind `slo_burn` with the anomalies' guarantees (timeout,
bounded attempts, idempotency key, a failure retried on the next run, to the same team).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime

import duckdb

from ledger.alerts.delivery import deliver, held_by_cooldown, retry_failed
from ledger.alerts.detection import _digest, fingerprint
from ledger.alerts.routing import Router, linked_message, router_for
from ledger.alerts.store import (
    COOLDOWN,
    DELIVERY_FAILED,
    SENT,
    Delivery,
    DeliveryItem,
    ensure_ops_schema,
    failed_deliveries,
    new_id,
)
from ledger.core.calendar import business_date, utc_now
from ledger.core.settings import Settings
from ledger.escaping import slack
from ledger.serving.links import board_link
from ledger.serving.published_copy import has_mart, open_published_with_ops

KIND = "slo_burn"
# The cooldown's severity scale is the anomalies' one: a page is critical, a ticket a warning.
SEVERITY_OF = {"page": "critical", "ticket": "warning"}
COOLDOWN_DAYS = 1
SEGMENT_LABELS = {
    "endpointing": "endpointing",
    "stt_final": "STT final",
    "llm_ttft": "LLM time to first token",
    "tts_first_frame": "TTS first frame",
    "network_playback": "network and playback",
    "first_audio": "first audio",
}

_DDL = """
create table if not exists ops.slo_alerts (
    alert_id varchar primary key,
    fingerprint varchar not null,
    profile varchar not null,
    tenant_id varchar not null,
    segment varchar not null,
    owner varchar,
    rule_name varchar not null,
    severity varchar not null,
    objective decimal(5, 4) not null,
    long_burn_rate double,
    short_burn_rate double,
    sli double,
    error_budget_remaining double,
    evaluated_at timestamp not null,
    notification varchar,
    destination varchar,
    detected_at timestamp not null
)
"""


@dataclass(frozen=True)
class BurnAlert:
    profile: str
    tenant_id: str
    segment: str
    owner: str | None
    objective: object
    rule_name: str
    severity: str  # page or ticket
    factor: float
    long_window_seconds: int
    short_window_seconds: int
    long_burn_rate: float
    short_burn_rate: float
    evaluated_at: datetime
    sli: float | None
    error_budget_remaining: float | None

    @property
    def fingerprint(self) -> str:
        return fingerprint(
            f"slo:{self.profile}:{self.tenant_id}", f"{self.segment}_burn", self.severity
        )

    @property
    def alert_id(self) -> str:
        return _digest(f"{self.fingerprint}|{self.evaluated_at.isoformat()}")


@dataclass
class SloAlertResult:
    firing: list[BurnAlert] = field(default_factory=list)
    sent: list[tuple[str | None, Delivery]] = field(default_factory=list)
    failed: int = 0
    held: int = 0
    retried_sent: int = 0
    lines: list[str] = field(default_factory=list)


def _window(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def firing_alerts(con: duckdb.DuckDBPyConnection) -> list[BurnAlert]:
    """The most severe firing rule of each SLO, pages first."""
    rows = con.execute(
        """
        select
            burn.profile, burn.tenant_id, burn.segment, burn.owner, burn.objective, burn.rule_name,
            burn.severity, burn.factor, burn.long_window_seconds, burn.short_window_seconds,
            burn.long_burn_rate, burn.short_burn_rate, burn.evaluated_at, slo.sli,
            slo.error_budget_remaining
        from marts.fct_latency_burn_rates as burn
        left join marts.fct_latency_slo as slo
            on burn.profile = slo.profile and burn.tenant_id = slo.tenant_id
            and burn.segment = slo.segment
        where burn.is_firing
        qualify row_number() over (
            partition by burn.profile, burn.tenant_id, burn.segment
            order by burn.severity = 'page' desc, burn.rule_order
        ) = 1
        order by burn.severity = 'page' desc, burn.tenant_id, burn.profile, burn.segment_order
        """
    ).fetchall()
    return [BurnAlert(*row) for row in rows]


def slo_link(settings: Settings, alert: BurnAlert) -> str:
    return board_link(
        settings.boards_url,
        "slo",
        {"tenant": alert.tenant_id, "profile": alert.profile, "segment": alert.segment},
    )


def burn_message(settings: Settings, alert: BurnAlert, escalated: bool) -> dict:
    """One Slack-compatible message for one SLO's firing rule, with a link to its SLO page."""
    label = SEGMENT_LABELS.get(alert.segment, alert.segment)
    team = slack.escape(alert.owner) if alert.owner else "no single team (first audio)"
    headline = (
        f"[{alert.severity.upper()}] {slack.escape(alert.tenant_id)} {slack.escape(label)} latency "
        f"SLO burning {alert.long_burn_rate:.1f}x its error budget "
        f"({slack.escape(alert.profile)} profile)"
    )
    if escalated:
        headline += " (escalated)"
    objective = f"{float(alert.objective) * 100:g}%"
    detail = (
        f"Burn rate {alert.long_burn_rate:.1f}x over {_window(alert.long_window_seconds)} and "
        f"{alert.short_burn_rate:.1f}x over {_window(alert.short_window_seconds)} (rule "
        f"{slack.escape(alert.rule_name)}: both above {alert.factor:g}x). Objective {objective} of turns "
        "within budget"
    )
    if alert.sli is not None:
        detail += f"; {alert.sli * 100:.2f}% over the SLO window"
    if alert.error_budget_remaining is not None:
        detail += f", {alert.error_budget_remaining * 100:.0f}% of the error budget left"
    return linked_message(
        headline,
        f"{detail}. Owner: {team}.",
        slo_link(settings, alert),
        "Open the SLO",
        f"voice ledger latency SLO | fingerprint {alert.fingerprint}",
    )


def _record(
    con: duckdb.DuckDBPyConnection, alert: BurnAlert, now: datetime, outcome: str, where: str
) -> None:
    con.execute(
        """
        insert into ops.slo_alerts values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        on conflict (alert_id) do update set notification = case
            when ops.slo_alerts.notification = 'sent' then 'sent' else excluded.notification end
        """,
        [
            alert.alert_id,
            alert.fingerprint,
            alert.profile,
            alert.tenant_id,
            alert.segment,
            alert.owner,
            alert.rule_name,
            alert.severity,
            alert.objective,
            alert.long_burn_rate,
            alert.short_burn_rate,
            alert.sli,
            alert.error_budget_remaining,
            alert.evaluated_at,
            outcome,
            where,
            now,
        ],
    )


def retry_routed(
    con: duckdb.DuckDBPyConnection, router: Router, kind: str, owner_of: Callable[[str], str | None]
) -> tuple[int, int]:
    """Send again this kind's failed notifications, each to its owner's destination; returns
    (now sent, still failing)."""
    sent = failing = 0
    for delivery in failed_deliveries(con, kinds=(kind,)):
        owner = owner_of(delivery.items[0].fingerprint) if delivery.items else None
        done, still = retry_failed(con, router.sink_for(owner), [delivery], utc_now())
        sent, failing = sent + len(done), failing + len(still)
    return sent, failing


def _owner_of(con: duckdb.DuckDBPyConnection) -> Callable[[str], str | None]:
    def owner(fp: str) -> str | None:
        row = con.execute(
            "select owner from ops.slo_alerts where fingerprint = ? limit 1", [fp]
        ).fetchone()
        return row[0] if row else None

    return owner


def notify_burn_alerts(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    router: Router,
    now: datetime,
    run_id: str,
) -> SloAlertResult:
    """Record and notify the firing SLOs of the marts `con` sees (the published copy)."""
    ensure_ops_schema(con)
    con.execute(_DDL)
    result = SloAlertResult()
    result.retried_sent, result.failed = retry_routed(con, router, KIND, _owner_of(con))
    if not has_mart(con, "fct_latency_burn_rates"):
        return result
    result.firing = firing_alerts(con)
    for alert in result.firing:
        day: date = business_date(alert.evaluated_at, settings.timezone)
        severity = SEVERITY_OF[alert.severity]
        where = router.describe(alert.owner)
        held, escalated = held_by_cooldown(con, alert.fingerprint, day, severity, COOLDOWN_DAYS)
        if held:
            result.held += 1
            _record(con, alert, now, COOLDOWN, where)
            continue
        delivery = Delivery(
            delivery_id=new_id(),
            kind=KIND,
            tenant_id=alert.tenant_id,
            business_date=day,
            severity=severity,
            payload=burn_message(settings, alert, escalated),
            items=[DeliveryItem(alert.fingerprint, None, severity, day)],
        )
        # Recorded first, so a retry of this delivery finds its owner.
        _record(con, alert, now, DELIVERY_FAILED, where)
        if deliver(con, router.sink_for(alert.owner), delivery, now, run_id):
            _record(con, alert, now, SENT, where)
            result.sent.append((alert.owner, delivery))
        else:
            result.failed += 1
    result.lines = _summary(result)
    return result


def _summary(result: SloAlertResult) -> list[str]:
    pages = sum(1 for alert in result.firing if alert.severity == "page")
    lines = [
        f"latency SLOs: {len(result.firing)} burning ({pages} paging), {len(result.sent)} "
        f"notifications sent, {result.held} held by the cooldown"
    ]
    if result.retried_sent:
        lines.append(f"{result.retried_sent} earlier failed SLO notifications delivered")
    if result.failed:
        lines.append(f"{result.failed} SLO notifications failed: retried on the next run")
    return lines


def run_slo_alerts(
    settings: Settings,
    *,
    now: datetime | None = None,
    router: Router | None = None,
    echo: Callable[[str], None] | None = print,
) -> SloAlertResult:
    """`ledger budgets alerts` and the build's last step: the burn-rate alerts of the newest
    published marts."""
    now = utc_now(now)
    router = router or router_for(settings, echo)
    with open_published_with_ops(settings) as con:
        return notify_burn_alerts(con, settings, router, now, new_id())
