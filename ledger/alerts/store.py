"""The `ops` schema of the warehouse: every anomaly found, every notification and its attempts.

| table                 | one row per                                    | key                        |
|-----------------------|------------------------------------------------|----------------------------|
| `ops.anomalies`       | anomaly (fingerprint x business date), paged or not | `anomaly_id`          |
| `ops.deliveries`      | notification (a tenant-day's new anomalies, or a data alert) | `delivery_id` |
| `ops.delivery_items`  | fingerprint carried by a notification, at its severity | (`delivery_id`, `fingerprint`) |
| `ops.alert_runs`      | run of `ledger alerts run` / the daily job     | `run_id`                   |

`ops.deliveries.attempts` counts every send tried, over all runs (each run retries within its
timeout and attempt bound); `status` is `sent` or `failed` (retried on the next run).

dbt never touches schema `ops`, so a rebuild of the marts keeps the history of alerts. Each alert
run ends by writing how many notifications of each kind are still undelivered to
`alerts/undelivered.json` (`record_undelivered`): `/metrics` reads it there, as a build holds the
warehouse.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb

from ledger.alerts.detection import Anomaly, severity_rank
from ledger.core.durable import write_text_atomically

_DDL = (
    "create schema if not exists ops",
    """
    create table if not exists ops.anomalies (
        anomaly_id varchar primary key,
        fingerprint varchar not null,
        tenant_id varchar not null,
        business_date date not null,
        metric varchar not null,
        unit varchar not null,
        currency varchar not null,
        value decimal(38, 12),
        expected decimal(38, 12),
        abs_change decimal(38, 12),
        pct_change decimal(38, 6),
        robust_z decimal(38, 6),
        severity varchar not null,
        baseline_days integer,
        cause_kind varchar,
        cause_component varchar,
        cause_component_share decimal(9, 6),
        cause_provider varchar,
        cause_model varchar,
        cause_provider_share decimal(9, 6),
        cause_hint varchar,
        note varchar,
        notification varchar,
        first_detected_at timestamp not null,
        last_detected_at timestamp not null,
        detection_count integer not null
    )
    """,
    """
    create table if not exists ops.deliveries (
        delivery_id varchar primary key,
        kind varchar not null,
        tenant_id varchar,
        business_date date not null,
        severity varchar not null,
        payload varchar not null,
        status varchar not null,
        channel varchar,
        attempts integer not null,
        last_error varchar,
        created_at timestamp not null,
        last_attempt_at timestamp,
        sent_at timestamp,
        run_id varchar
    )
    """,
    """
    create table if not exists ops.delivery_items (
        delivery_id varchar not null,
        fingerprint varchar not null,
        anomaly_id varchar,
        severity varchar not null,
        business_date date not null
    )
    """,
    """
    create table if not exists ops.alert_runs (
        run_id varchar primary key,
        business_date date not null,
        started_at timestamp not null,
        data_closed boolean not null,
        newest_event_at timestamp,
        missing_tenants varchar[],
        anomalies integer not null,
        paged integer not null,
        notifications_sent integer not null,
        notifications_failed integer not null,
        suppressed_by_cooldown integer not null,
        retried_sent integer not null,
        channel varchar not null
    )
    """,
)

# Notification outcomes recorded on ops.anomalies.notification.
SENT = "sent"
PENDING_RETRY = "pending_retry"
COOLDOWN = "cooldown"
NOT_PAGED = "not_paged"
REPORT_ONLY = "report_only"

DELIVERY_SENT = "sent"
DELIVERY_FAILED = "failed"

_MONEY = Decimal("0.000000000001")
_SIX = Decimal("0.000001")


def ensure_ops_schema(con: duckdb.DuckDBPyConnection) -> None:
    for statement in _DDL:
        con.execute(statement)


def new_id() -> str:
    return uuid.uuid4().hex[:16]


def _q(value: Decimal | None, step: Decimal) -> Decimal | None:
    return None if value is None else value.quantize(step)


def record_anomalies(
    con: duckdb.DuckDBPyConnection,
    anomalies: Sequence[Anomaly],
    currency: str,
    now: datetime,
    notification: str | None = None,
) -> None:
    """Insert new anomalies, refresh the figures of ones seen before (a rebuild may move them).

    `notification` is only written for new rows; an existing row keeps its outcome until
    `set_notification` changes it.
    """
    for a in anomalies:
        c = a.cause
        con.execute(
            """
            insert into ops.anomalies values (
                ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
            on conflict (anomaly_id) do update set
                value = excluded.value, expected = excluded.expected,
                abs_change = excluded.abs_change, pct_change = excluded.pct_change,
                robust_z = excluded.robust_z, severity = excluded.severity,
                baseline_days = excluded.baseline_days, cause_kind = excluded.cause_kind,
                cause_component = excluded.cause_component,
                cause_component_share = excluded.cause_component_share,
                cause_provider = excluded.cause_provider, cause_model = excluded.cause_model,
                cause_provider_share = excluded.cause_provider_share,
                cause_hint = excluded.cause_hint, note = excluded.note,
                notification = case when ops.anomalies.notification = 'report_only'
                    then coalesce(excluded.notification, ops.anomalies.notification)
                    else ops.anomalies.notification end,
                last_detected_at = excluded.last_detected_at,
                detection_count = ops.anomalies.detection_count + 1
            """,
            [
                a.anomaly_id,
                a.fingerprint,
                a.tenant_id,
                a.business_date,
                a.metric,
                a.unit,
                currency,
                _q(a.value, _MONEY),
                _q(a.expected, _MONEY),
                _q(a.abs_change, _MONEY),
                _q(a.pct_change, _SIX),
                _q(a.robust_z, _SIX),
                a.severity,
                a.baseline_days,
                c.kind,
                c.component,
                _q(c.component_share, _SIX),
                c.provider,
                c.model,
                _q(c.provider_share, _SIX),
                c.hint,
                a.note,
                notification,
                now,
                now,
            ],
        )


def set_notification(con: duckdb.DuckDBPyConnection, anomaly_id: str, outcome: str) -> None:
    """Record a notification outcome; a cooldown never hides that the anomaly was sent before."""
    con.execute(
        """
        update ops.anomalies set notification = ?
        where anomaly_id = ?
            and not (? = 'cooldown' and coalesce(notification, '') in ('sent', 'pending_retry'))
        """,
        [outcome, anomaly_id, outcome],
    )


def notified_severity(
    con: duckdb.DuckDBPyConnection, fingerprint: str, day: date, cooldown_days: int
) -> str | None:
    """The highest severity already notified (sent, or failed and awaiting its retry) for
    `fingerprint` on a business date less than `cooldown_days` away from `day`."""
    rows = con.execute(
        """
        select items.severity
        from ops.delivery_items as items
        inner join ops.deliveries as deliveries using (delivery_id)
        where items.fingerprint = ?
            and items.business_date > ? and items.business_date < ?
        """,
        [fingerprint, day - timedelta(days=cooldown_days), day + timedelta(days=cooldown_days)],
    ).fetchall()
    severities = [row[0] for row in rows]
    return max(severities, key=severity_rank) if severities else None


@dataclass(frozen=True)
class DeliveryItem:
    fingerprint: str
    anomaly_id: str | None
    severity: str
    business_date: date


@dataclass
class Delivery:
    delivery_id: str
    kind: str  # "anomaly" or "data_stale"
    tenant_id: str | None
    business_date: date
    severity: str
    payload: dict
    items: list[DeliveryItem]
    status: str = DELIVERY_FAILED
    channel: str | None = None
    attempts: int = 0
    last_error: str | None = None


def insert_delivery(
    con: duckdb.DuckDBPyConnection, delivery: Delivery, now: datetime, run_id: str
) -> None:
    con.execute(
        "insert into ops.deliveries values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            delivery.delivery_id,
            delivery.kind,
            delivery.tenant_id,
            delivery.business_date,
            delivery.severity,
            json.dumps(delivery.payload, ensure_ascii=False),
            delivery.status,
            delivery.channel,
            delivery.attempts,
            delivery.last_error,
            now,
            now if delivery.attempts else None,
            now if delivery.status == DELIVERY_SENT else None,
            run_id,
        ],
    )
    for item in delivery.items:
        con.execute(
            "insert into ops.delivery_items values (?, ?, ?, ?, ?)",
            [
                delivery.delivery_id,
                item.fingerprint,
                item.anomaly_id,
                item.severity,
                item.business_date,
            ],
        )


def update_delivery(con: duckdb.DuckDBPyConnection, delivery: Delivery, now: datetime) -> None:
    con.execute(
        """
        update ops.deliveries set status = ?, channel = ?, attempts = ?, last_error = ?,
            last_attempt_at = ?, sent_at = case when ? = 'sent' then ? else sent_at end
        where delivery_id = ?
        """,
        [
            delivery.status,
            delivery.channel,
            delivery.attempts,
            delivery.last_error,
            now,
            delivery.status,
            now,
            delivery.delivery_id,
        ],
    )


def failed_deliveries(
    con: duckdb.DuckDBPyConnection,
    kinds: Sequence[str] | None = None,
    except_kinds: Sequence[str] = (),
) -> list[Delivery]:
    """Notifications not yet delivered, oldest first: retried on every run until they go out.
    `kinds` / `except_kinds`: only those kinds / all but those (a routed kind is retried by its
    own run, to its own destination)."""
    rows = con.execute(
        """
        select delivery_id, kind, tenant_id, business_date, severity, payload, channel, attempts,
            last_error
        from ops.deliveries
        where status = ? and (? or list_contains(?, kind)) and not list_contains(?, kind)
        order by created_at, delivery_id
        """,
        [DELIVERY_FAILED, kinds is None, list(kinds or []), list(except_kinds)],
    ).fetchall()
    deliveries = []
    for row in rows:
        items = [
            DeliveryItem(fp, anomaly_id, severity, day)
            for fp, anomaly_id, severity, day in con.execute(
                "select fingerprint, anomaly_id, severity, business_date "
                "from ops.delivery_items where delivery_id = ?",
                [row[0]],
            ).fetchall()
        ]
        deliveries.append(
            Delivery(
                delivery_id=row[0],
                kind=row[1],
                tenant_id=row[2],
                business_date=row[3],
                severity=row[4],
                payload=json.loads(row[5]),
                items=items,
                status=DELIVERY_FAILED,
                channel=row[6],
                attempts=row[7],
                last_error=row[8],
            )
        )
    return deliveries


def undelivered_lines(deliveries: Sequence[Delivery]) -> list[str]:
    """One line per notification not delivered yet, saying what it is and why it is still out."""
    return [
        f"not delivered yet: {d.kind} {d.severity} for {d.tenant_id or 'every tenant'} on "
        f"{d.business_date.isoformat()} after {d.attempts} attempts ({d.last_error})"
        for d in deliveries
    ]


UNDELIVERED_FILE = "undelivered.json"


def record_undelivered(con: duckdb.DuckDBPyConnection, alerts_dir: Path) -> None:
    """Write the count of notifications not delivered yet, per kind ever sent, to
    `alerts_dir/undelivered.json`."""
    counts = dict(
        con.execute(
            "select kind, count(*) filter (where status = ?) from ops.deliveries "
            "group by kind order by kind",
            [DELIVERY_FAILED],
        ).fetchall()
    )
    write_text_atomically(alerts_dir / UNDELIVERED_FILE, json.dumps({"undelivered": counts}))


def read_undelivered(alerts_dir: Path) -> dict[str, int] | None:
    """What the last alert run wrote (`record_undelivered`); None before any run."""
    try:
        return json.loads((alerts_dir / UNDELIVERED_FILE).read_text())["undelivered"]
    except FileNotFoundError:
        return None


def record_run(con: duckdb.DuckDBPyConnection, values: dict) -> None:
    names = list(values)
    con.execute(
        f"insert into ops.alert_runs ({', '.join(names)}) values ({', '.join('?' for _ in names)})",
        [values[name] for name in names],
    )
