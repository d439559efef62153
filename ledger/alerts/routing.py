"""Where an alert goes: the owner team's destination (SPEC 13), else the default one.

`LEDGER_OWNER_WEBHOOKS` (`audio=URL inference=URL ...`, a secret kept in the environment only)
names a webhook per owner team; a team without one, and an alert without an owner (first audio
belongs to no single team, a spend budget to finance), goes where the cost anomalies go
(`LEDGER_WEBHOOK_URL`, else the notifications file). The delivery itself (cooldown, retries,
idempotency keys, `ops.deliveries`) is the anomalies' own (ledger/alerts/delivery.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ledger.alerts.delivery import FileSink, Sink, UnusableSink, WebhookSink, WebhookURLError
from ledger.core.settings import ENVIRONMENT, Settings
from ledger.escaping import slack

# Kinds of notification that go to a routed destination: their failed deliveries are retried by
# their own runs (to the same destination), never by the cost anomaly run's default sink.
ROUTED_KINDS = ("slo_burn", "spend_budget")


@dataclass
class Router:
    default: Sink
    owners: dict[str, Sink] = field(default_factory=dict)

    def sink_for(self, owner: str | None) -> Sink:
        return self.owners.get(owner or "", self.default)

    def describe(self, owner: str | None) -> str:
        sink = self.sink_for(owner)
        if isinstance(sink, UnusableSink):
            return "unusable webhook (not sent)"
        return f"webhook at {sink.host}" if isinstance(sink, WebhookSink) else sink.channel

    @property
    def unusable(self) -> list[str]:
        """Why each destination that cannot be used cannot (its variable and entry named)."""
        sinks = [self.default, *self.owners.values()]
        return [sink.reason for sink in sinks if isinstance(sink, UnusableSink)]


def owner_setting(team: str) -> str:
    """Where an owner team's webhook is configured, as messages name it."""
    return f"{ENVIRONMENT['owner_webhooks']} entry {team!r}"


# Without LEDGER_WEBHOOK_URL, alerts are appended to this file under the home's alerts folder.
NOTIFICATIONS_FILE = "notifications.jsonl"


def default_sink(settings: Settings, echo: Callable[[str], None] | None = print) -> Sink:
    """LEDGER_WEBHOOK_URL's webhook, else the notifications file under the home (and `echo`)."""
    if settings.webhook_url:
        return WebhookSink(settings.webhook_url)
    return FileSink(settings.alerts_dir / NOTIFICATIONS_FILE, echo=echo)


def router_for(settings: Settings, echo: Callable[[str], None] | None = print) -> Router:
    """Every destination checked now; one that cannot be used becomes an `UnusableSink` (its
    notifications kept until it is fixed), so it never stops the others."""

    def checked(make: Callable[[], Sink]) -> Sink:
        try:
            return make()
        except WebhookURLError as exc:
            return UnusableSink(str(exc))

    return Router(
        default=checked(lambda: default_sink(settings, echo)),
        owners={
            team: checked(lambda url=url, team=team: WebhookSink(url, setting=owner_setting(team)))
            for team, url in settings.owner_webhook_urls.items()
        },
    )


def linked_message(headline: str, detail: str, link: str, label: str, context: str) -> dict:
    """A Slack-compatible message (`text` fallback plus `blocks`) that links to a board page; the
    headline, detail and context are mrkdwn whose values from the data the caller escaped
    (ledger.escaping.slack)."""
    return {
        "text": f"{headline}: {link}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline}*"}},
            {"type": "section", "text": {"type": "mrkdwn", "text": detail}},
            {"type": "section", "text": {"type": "mrkdwn", "text": slack.link(link, label)}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": context}]},
        ],
    }
