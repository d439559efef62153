"""Alert delivery without storms: Slack-compatible messages, a webhook or a file sink, cooldowns.

Rules, in the order a run applies them:

1. Notifications that failed on an earlier run are sent again first; a failure is never dropped.
2. An anomaly is notified when its fingerprint has not been notified (sent, or failed and awaiting
   its retry) for a business date less than `cooldown_days` away, or when its severity is higher
   than the one notified then (an escalation).
3. A tenant-day's anomalies that pass go out together, in one message.
4. Each send has a timeout and a bounded number of attempts with backoff; what still fails is
   recorded as failed, with the error, for the next run. Every attempt is counted.
5. Each notification carries an `Idempotency-Key` header (its delivery id), the same on every
   attempt of every run, so a receiver that got a copy already can drop the next one.

The webhook URL is checked when the sink is made (http or https, a host); `user:pass@` in it is
sent as HTTP basic authentication. The URL is a secret (a Slack webhook's path is its key): no
message, error or table ever shows more than its host, and credentials in an error text are
masked.

Without a webhook URL the file sink appends each message to `alerts/notifications.jsonl` under
`LEDGER_HOME` and echoes its text to the terminal.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import duckdb

from ledger.alerts.detection import Anomaly, Cause, severity_rank
from ledger.alerts.figures import Freshness
from ledger.alerts.store import (
    COOLDOWN,
    DELIVERY_FAILED,
    DELIVERY_SENT,
    PENDING_RETRY,
    SENT,
    Delivery,
    DeliveryItem,
    insert_delivery,
    new_id,
    notified_severity,
    set_notification,
    update_delivery,
)
from ledger.core.numbers import money, percent, points, rate
from ledger.escaping import slack
from ledger.serving.links import board_link

DEFAULT_COOLDOWN_DAYS = 3
SEVERITY_ICON = {"info": "ℹ️", "warning": "⚠️", "critical": "🚨"}
METRIC_LABELS = {
    "cost_per_billable_minute": "cost per billable minute",
    "total_cost": "total cost",
    "gross_margin_pct": "gross margin %",
    "asr_cost": "ASR cost",
    "llm_cost": "LLM cost",
    "tts_cost": "TTS cost",
    "realtime_cost": "realtime cost",
    "vision_cost": "vision cost",
    "infra_cost": "infra cost",
}


IDEMPOTENCY_HEADER = "Idempotency-Key"


class DeliveryError(RuntimeError):
    """A notification could not be delivered; the message says where and why (never the URL's
    secret path). `attempts` is how many sends were tried."""

    def __init__(self, message: str, attempts: int = 1) -> None:
        super().__init__(message)
        self.attempts = attempts


class WebhookURLError(ValueError):
    """A webhook URL cannot be used; the message names its variable (and entry), never the URL."""


# The variable a webhook URL comes from, as messages name it (an owner team's: its entry of
# LEDGER_OWNER_WEBHOOKS, `ledger.alerts.routing`).
DEFAULT_WEBHOOK_SETTING = "LEDGER_WEBHOOK_URL"


class Sink(Protocol):
    channel: str

    def send(self, payload: dict, key: str) -> int:
        """Deliver one message (`key`: its idempotency key); return the number of attempts it
        took, or raise DeliveryError."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A webhook that answers 3xx has not taken the message: following the redirect would replay
    it as a GET without its body, and send the Authorization header to whatever host the answer
    names. urllib raises the 3xx as an HTTPError instead."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_WEBHOOK_OPENER = urllib.request.build_opener(_NoRedirects)


@dataclass
class WebhookSink:
    """POST the Slack-compatible JSON to an incoming-webhook URL."""

    url: str
    timeout_seconds: float = 5.0
    attempts: int = 3
    backoff_seconds: float = 0.5
    channel: str = "webhook"
    setting: str = DEFAULT_WEBHOOK_SETTING  # where the URL is configured, for messages

    def __post_init__(self) -> None:
        try:
            parts = urlsplit(self.url.strip())
        except ValueError as exc:  # e.g. an unclosed IPv6 bracket
            raise WebhookURLError(
                f"{self.setting} cannot be parsed as a URL (check brackets around an IPv6 "
                "address; the URL is not shown, it holds the webhook's secret)"
            ) from exc
        if parts.scheme.lower() not in ("http", "https"):
            shown = f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
            raise WebhookURLError(
                f"{self.setting} must be an http:// or https:// URL (it has {shown}; the URL "
                "is not shown, it holds the webhook's secret)"
            )
        try:
            hostname, port = parts.hostname, parts.port
        except ValueError:
            hostname, port = None, None
        if not hostname:
            raise WebhookURLError(
                f"{self.setting} has no valid host[:port] (the URL is not shown, it holds the "
                "webhook's secret)"
            )
        self._host = hostname if port is None else f"{hostname}:{port}"
        netloc = f"[{hostname}]" if ":" in hostname else hostname
        netloc += "" if port is None else f":{port}"
        self._target = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
        self._authorization = None
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            self._authorization = "Basic " + base64.b64encode(pair.encode()).decode()
        # What must never appear in a message: the credentials, the path, the query values.
        self._secrets = sorted(
            {
                text
                for text in (
                    parts.username,
                    parts.password,
                    unquote(parts.username or ""),
                    unquote(parts.password or ""),
                    parts.path.strip("/"),
                    parts.query,
                    *(value for _, value in parse_qsl(parts.query)),
                )
                if text and len(text) >= 3
            },
            key=len,
            reverse=True,
        )

    @property
    def host(self) -> str:
        # Slack webhook paths are secrets: errors and tables name the host (and port) only.
        return self._host

    def redact(self, text: str) -> str:
        """`text` with every secret part of the URL masked."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def send(self, payload: dict, key: str) -> int:
        body = json.dumps(payload, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json; charset=utf-8", IDEMPOTENCY_HEADER: key}
        if self._authorization:
            headers["Authorization"] = self._authorization
        last_error = ""
        for attempt in range(self.attempts):
            if attempt:
                time.sleep(self.backoff_seconds * 2 ** (attempt - 1))
            request = urllib.request.Request(
                self._target, data=body, headers=headers, method="POST"
            )
            try:
                with _WEBHOOK_OPENER.open(request, timeout=self.timeout_seconds) as response:
                    if 200 <= response.status < 300:
                        return attempt + 1
                    last_error = f"HTTP {response.status}"
            except urllib.error.HTTPError as exc:
                if 300 <= exc.code < 400:
                    # Asking again gets the same answer: fail now, named, without following it.
                    raise DeliveryError(
                        f"webhook at {self.host} answered HTTP {exc.code} (a redirect, not "
                        "followed: the message and its credentials go to the configured host "
                        f"only; set {self.setting} to the final address); the notification is "
                        "kept and retried on the next run",
                        attempts=attempt + 1,
                    ) from None
                last_error = f"HTTP {exc.code}"
            except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
                reason = getattr(exc, "reason", exc)
                last_error = self.redact(f"{type(exc).__name__}: {reason}")
        raise DeliveryError(
            f"webhook at {self.host} failed after {self.attempts} attempts ({last_error}); "
            "the notification is kept and retried on the next run",
            attempts=self.attempts,
        )


@dataclass
class UnusableSink:
    """A destination whose URL cannot be used (`reason`, which names its variable): each message
    for it fails at once and is kept, sent once the URL is fixed, while every other destination
    goes on."""

    reason: str
    channel: str = "webhook"

    def send(self, payload: dict, key: str) -> int:
        raise DeliveryError(
            f"{self.reason}; the notification is kept and sent once it is fixed", attempts=0
        )


@dataclass
class FileSink:
    """Append each message to a JSON Lines file and echo its text (no webhook configured)."""

    path: Path
    echo: Callable[[str], None] | None = print
    channel: str = "file"

    def send(self, payload: dict, key: str) -> int:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(payload, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise DeliveryError(f"could not write {self.path}: {exc}") from exc
        if self.echo is not None:
            self.echo(payload["text"])
        return 1


# ---- messages ------------------------------------------------------------------------------------


def anomaly_size(anomaly: Anomaly, currency: str) -> str:
    """The anomaly's value against the usual one (anything with the Anomaly's unit, value,
    expected, abs_change and pct_change: the boards' inbox hands its rows)."""
    if anomaly.unit == "points":
        return (
            f"{points(anomaly.value).removesuffix(' pp')}% against a usual "
            f"{points(anomaly.expected).removesuffix(' pp')}% "
            f"({points(anomaly.abs_change, signed=True)})"
        )
    shown = rate if anomaly.unit == "currency/min" else money
    unit = f"{currency}/min" if anomaly.unit == "currency/min" else currency
    sign = "+" if anomaly.abs_change > 0 else ""
    return (
        f"{shown(anomaly.value)} {unit} against a usual {shown(anomaly.expected)} "
        f"({sign}{shown(anomaly.abs_change)}, {percent(anomaly.pct_change, signed=True)})"
    )


def describe_cause(anomaly: Anomaly, written: Callable[[object], str] = str) -> str:
    return cause_text(anomaly.cause, written)


def cause_text(cause: Cause, written: Callable[[object], str] = str) -> str:
    """The likely cause in one line, as alerts and the boards' anomaly inbox say it; `written`
    turns each value from the data (component, provider, model, hint) into the text of the medium
    the line goes to (ledger.escaping; as it is for a table cell)."""
    if cause.component is None:
        return "no single component stands out"
    parts = [written(cause.component)]
    if cause.component_share is not None:
        parts[0] += f" ({percent(cause.component_share * 100)} of the change)"
    if cause.provider is not None and cause.provider_share is not None:
        parts.append(
            f"{written(cause.provider)}/{written(cause.model)} "
            f"({percent(cause.provider_share * 100)} of that)"
        )
    if cause.hint:
        parts.append(written(cause.hint))
    text = "; ".join(parts)
    return text if cause.kind == "unit_cost" else f"volume or mix: {text}"


def anomaly_line(anomaly: Anomaly, currency: str) -> str:
    label = METRIC_LABELS.get(anomaly.metric, anomaly.metric)
    return (
        f"{SEVERITY_ICON[anomaly.severity]} *{label}* {anomaly_size(anomaly, currency)}, "
        f"robust z {anomaly.robust_z.quantize(1)}. Likely cause: "
        f"{describe_cause(anomaly, slack.escape)}"
    )


def anomaly_link(boards_url: str, tenant_id: str, day: date) -> str:
    """The boards' overview filtered to the tenant and the day: where the reader sees the anomaly
    marked and what drove the change."""
    return board_link(boards_url, "overview", {"tenant": tenant_id, "from": day, "to": day})


def anomaly_message(
    tenant_id: str,
    day: date,
    anomalies: Sequence[Anomaly],
    currency: str,
    escalated: bool,
    link: str,
) -> dict:
    """One Slack-compatible message (`text` fallback plus `blocks`) for a tenant-day, with the
    deep link into the boards (`link`) in both; every value from the data escaped for Slack."""
    top = max(anomalies, key=lambda a: severity_rank(a.severity))
    label = METRIC_LABELS.get(top.metric, top.metric)
    headline = (
        f"[{top.severity.upper()}] {slack.escape(tenant_id)} {day.isoformat()}: {label} "
        f"{percent(top.pct_change, signed=True)}"
    )
    if escalated:
        headline += " (escalated)"
    lines = [anomaly_line(a, currency) for a in anomalies]
    fingerprints = ", ".join(a.fingerprint for a in anomalies)
    return {
        "text": f"{headline} {link}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline}*"}},
            {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}},
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": slack.link(link, "Open in the boards")},
            },
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": f"voice ledger cost anomaly | fingerprint {fingerprints}",
                    }
                ],
            },
        ],
    }


def stale_message(freshness: Freshness) -> dict:
    headline = f"[DATA STALE] cost alerts held for {freshness.business_date.isoformat()}"
    detail = freshness.describe(slack.escape)
    return {
        "text": f"{headline}: {detail}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline}*"}},
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": f"{detail}. Anomaly alerts resume once the data is complete; "
                    "check the ingest (landing folder, `ledger build`).",
                },
            },
            {
                "type": "context",
                "elements": [{"type": "mrkdwn", "text": "voice ledger data freshness"}],
            },
        ],
    }


def stale_fingerprint(freshness: Freshness) -> str:
    from ledger.alerts.detection import fingerprint

    scope = "all" if not freshness.is_closed else ",".join(freshness.missing_tenants)
    return fingerprint(f"data:{scope}", "data_stale", "missing")


# ---- sending -------------------------------------------------------------------------------------


@dataclass
class DeliveryOutcome:
    sent: list[Delivery] = field(default_factory=list)
    failed: list[Delivery] = field(default_factory=list)
    retried_sent: list[Delivery] = field(default_factory=list)
    suppressed: list[Anomaly] = field(default_factory=list)
    suppressed_stale: bool = False


def _attempt(sink: Sink, delivery: Delivery) -> None:
    """Send `delivery` once through `sink` (which may try several times); count every try."""
    delivery.channel = sink.channel
    try:
        # The delivery id is the idempotency key: the same on every try of every run.
        tries = sink.send(delivery.payload, delivery.delivery_id)
    except DeliveryError as exc:
        delivery.attempts += exc.attempts
        delivery.status = DELIVERY_FAILED
        delivery.last_error = str(exc)
    else:
        delivery.attempts += tries
        delivery.status = DELIVERY_SENT
        delivery.last_error = None


def held_by_cooldown(
    con: duckdb.DuckDBPyConnection,
    fingerprint: str,
    day: date,
    severity: str,
    cooldown_days: int,
) -> tuple[bool, bool]:
    """The cooldown gate every notification passes, once: (held back, escalated). Held back when
    the same fingerprint was notified for a business date less than `cooldown_days` away at the
    same severity or higher; escalated when it was notified before at a lower one."""
    previous = notified_severity(con, fingerprint, day, cooldown_days)
    if previous is None:
        return False, False
    if severity_rank(severity) <= severity_rank(previous):
        return True, False
    return False, True


def deliver(
    con: duckdb.DuckDBPyConnection, sink: Sink, delivery: Delivery, now: datetime, run_id: str
) -> bool:
    """Send `delivery` once and record it (sent, or failed for the next run to retry); True when
    sent."""
    _attempt(sink, delivery)
    insert_delivery(con, delivery, now, run_id)
    return delivery.status == DELIVERY_SENT


def _mark_items(con: duckdb.DuckDBPyConnection, delivery: Delivery) -> None:
    outcome = SENT if delivery.status == DELIVERY_SENT else PENDING_RETRY
    for item in delivery.items:
        if item.anomaly_id is not None:
            set_notification(con, item.anomaly_id, outcome)


def retry_failed(
    con: duckdb.DuckDBPyConnection, sink: Sink, failed: Sequence[Delivery], now: datetime
) -> tuple[list[Delivery], list[Delivery]]:
    """Send again what earlier runs could not; returns (now sent, still failing)."""
    sent, still = [], []
    for delivery in failed:
        _attempt(sink, delivery)
        update_delivery(con, delivery, now)
        _mark_items(con, delivery)
        (sent if delivery.status == DELIVERY_SENT else still).append(delivery)
    return sent, still


def notify_anomalies(
    con: duckdb.DuckDBPyConnection,
    sink: Sink,
    anomalies: Sequence[Anomaly],
    currency: str,
    now: datetime,
    run_id: str,
    cooldown_days: int = DEFAULT_COOLDOWN_DAYS,
    *,
    boards_url: str,
) -> DeliveryOutcome:
    """Notify the paged anomalies that the cooldown lets through, one message per tenant-day,
    each with its link into the boards at `boards_url` (Settings.boards_url)."""
    outcome = DeliveryOutcome()
    groups: dict[tuple[str, date], list[tuple[Anomaly, bool]]] = {}
    for anomaly in anomalies:
        held, escalated = held_by_cooldown(
            con, anomaly.fingerprint, anomaly.business_date, anomaly.severity, cooldown_days
        )
        if held:
            set_notification(con, anomaly.anomaly_id, COOLDOWN)
            outcome.suppressed.append(anomaly)
            continue
        groups.setdefault((anomaly.tenant_id, anomaly.business_date), []).append(
            (anomaly, escalated)
        )
    for (tenant_id, day), members in sorted(groups.items()):
        group = [a for a, _ in members]
        delivery = Delivery(
            delivery_id=new_id(),
            kind="anomaly",
            tenant_id=tenant_id,
            business_date=day,
            severity=max((a.severity for a in group), key=severity_rank),
            payload=anomaly_message(
                tenant_id,
                day,
                group,
                currency,
                escalated=any(e for _, e in members),
                link=anomaly_link(boards_url, tenant_id, day),
            ),
            items=[
                DeliveryItem(a.fingerprint, a.anomaly_id, a.severity, a.business_date)
                for a in group
            ],
        )
        sent = deliver(con, sink, delivery, now, run_id)
        _mark_items(con, delivery)
        (outcome.sent if sent else outcome.failed).append(delivery)
    return outcome


def notify_stale(
    con: duckdb.DuckDBPyConnection,
    sink: Sink,
    freshness: Freshness,
    now: datetime,
    run_id: str,
    cooldown_days: int = DEFAULT_COOLDOWN_DAYS,
) -> DeliveryOutcome:
    """One "data is stale" notification instead of anomaly alerts, itself under the cooldown."""
    outcome = DeliveryOutcome()
    fp = stale_fingerprint(freshness)
    # No events at all for the day is worse than a day still filling up.
    severity = "warning" if freshness.has_events_on_day or freshness.is_closed else "critical"
    held, _ = held_by_cooldown(con, fp, freshness.business_date, severity, cooldown_days)
    if held:
        outcome.suppressed_stale = True
        return outcome
    delivery = Delivery(
        delivery_id=new_id(),
        kind="data_stale",
        tenant_id=None,
        business_date=freshness.business_date,
        severity=severity,
        payload=stale_message(freshness),
        items=[DeliveryItem(fp, None, severity, freshness.business_date)],
    )
    sent = deliver(con, sink, delivery, now, run_id)
    (outcome.sent if sent else outcome.failed).append(delivery)
    return outcome
