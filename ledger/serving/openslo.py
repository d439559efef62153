"""`ledger export openslo` (SPEC 13): the latency SLOs as OpenSLO v1 documents, for teams that run
their alerting elsewhere.

From the budgets file and the settings alone (no traffic): per budget profile and segment (first
audio included), and per tenant override, an `SLI` (a ratio of good turns, those within the
budget, to all measured turns) and an `SLO` (its objective over the rolling window, occurrences
budgeting); per burn-rate rule an `AlertCondition`, per owner team an `AlertNotificationTarget`,
and per rule and owner team an `AlertPolicy` that the team's SLOs name, notifying that team.

What OpenSLO tools require of it (tests/support/openslo_spec.py checks each, from the v1
specification): every name a DNS-1123 label (at most 63 lowercase letters, digits and `-`) unique
within its kind, every reference (`indicatorRef`, `alertPolicyRef`, `conditionRef`, `targetRef`)
resolving to a document of the export, one condition per policy. Tenant ids are free text (any
printable ASCII up to 128 characters), so a name part that is not a label already is folded to one
and given a short hash of the original: `big_customer-eu` and `big-customer-eu` stay two SLOs.
OpenSLO v1 has no second window in an alert condition: the rule's long window is its
`lookbackWindow`, it alerts at once (`alertAfter: 0m`), and the short window, which a consumer
needs to page only while the burn goes on, is kept in the `voice-ledger/short-window` annotation.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from ledger.core.durable import write_atomically
from ledger.core.settings import Settings
from ledger.core.slo_rules import BurnRateRule, parse_burn_rate_rules
from ledger.reference import load_reference
from ledger.reference.models import LatencyBudgetRow

API_VERSION = "openslo/v1"
SERVICE = "voice-agent"
DEFAULT_TEAM = "unowned"  # first audio: no single team owns it
SHORT_WINDOW_ANNOTATION = "voice-ledger/short-window"
EXPORT_FILE_NAME = "openslo.yaml"  # what `--out DIR` writes into DIR

_LABEL = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")
_NOT_LABEL_CHARACTERS = re.compile(r"[^a-z0-9]+")
_MAX_NAME = 63
_HASH_LENGTH = 8


def dns_label(*parts: str) -> str:
    """The OpenSLO name of `parts` joined by `-`: as written when that is a DNS-1123 label of at
    most 63 characters, else folded to one (lower case, each run of other characters a `-`, the
    longest part shortened until it fits) with `-` and a stable 8-hex-digit hash of the parts as
    given, so that two parts that fold alike (`big_customer-eu`, `big-customer-eu`) still get two
    names."""
    parts = tuple(part for part in parts if part)
    joined = "-".join(parts)
    if len(joined) <= _MAX_NAME and _LABEL.fullmatch(joined):
        return joined
    digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:_HASH_LENGTH]
    folded = [_NOT_LABEL_CHARACTERS.sub("-", part.lower()).strip("-") or "x" for part in parts]
    room = _MAX_NAME - _HASH_LENGTH - 1
    while len("-".join(folded)) > room:
        longest = max(range(len(folded)), key=lambda i: len(folded[i]))
        excess = len("-".join(folded)) - room
        folded[longest] = folded[longest][: max(1, len(folded[longest]) - excess)].rstrip("-")
    return f"{'-'.join(folded)}-{digest}"


def _vocabulary(word: str) -> str:
    """Our own ids (segments, profiles, rules, teams) use `_` where a label has `-`; they are
    distinct after the swap, so they keep their readable names."""
    return word.replace("_", "-").lower()


def _condition_name(rule: BurnRateRule) -> str:
    return dns_label("burn", _vocabulary(rule.name))


def _policy_name(rule: BurnRateRule, team: str) -> str:
    return dns_label(_vocabulary(rule.name), _vocabulary(team))


def _target_name(team: str) -> str:
    return dns_label("team", _vocabulary(team))


def _slos(
    rows: tuple[LatencyBudgetRow, ...],
) -> dict[tuple[str, str | None, str], LatencyBudgetRow]:
    """One row per (profile, tenant or None, segment): scenarios sharing a profile share it."""
    found: dict[tuple[str, str | None, str], LatencyBudgetRow] = {}
    for row in rows:
        found.setdefault((row.profile, row.tenant_id, row.segment), row)
    return found


def _condition(rule: BurnRateRule) -> dict:
    return {
        "apiVersion": API_VERSION,
        "kind": "AlertCondition",
        "metadata": {
            "name": _condition_name(rule),
            "annotations": {SHORT_WINDOW_ANNOTATION: rule.short_window},
        },
        "spec": {
            "description": f"burn rate above {rule.factor:g} over {rule.long_window}, and over "
            f"{rule.short_window} (the short window: annotation {SHORT_WINDOW_ANNOTATION})",
            "severity": rule.severity,
            "condition": {
                "kind": "burnrate",
                "op": "gt",
                "threshold": rule.factor,
                "lookbackWindow": rule.long_window,
                "alertAfter": "0m",
            },
        },
    }


def _notification_target(team: str) -> dict:
    # The destination itself (LEDGER_OWNER_WEBHOOKS) holds a secret: named, never written out.
    return {
        "apiVersion": API_VERSION,
        "kind": "AlertNotificationTarget",
        "metadata": {"name": _target_name(team), "displayName": f"the {team} team"},
        "spec": {
            "description": f"the {team} team's alert webhook (LEDGER_OWNER_WEBHOOKS, else "
            "LEDGER_WEBHOOK_URL)",
            "target": "webhook",
        },
    }


def _metric_source(column: str, query: str) -> dict:
    return {
        "metricSource": {
            "type": "voice-ledger",
            "spec": {"mart": "fct_latency_slo", "column": column, "query": query},
        }
    }


def openslo_documents(settings: Settings) -> Iterator[dict]:
    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    rules = parse_burn_rate_rules(settings.burn_rate_rules)
    window = f"{settings.slo_window_days}d"
    slos = _slos(ref.latency_budgets)
    teams = sorted({row.owner or DEFAULT_TEAM for row in slos.values()})
    yield {
        "apiVersion": API_VERSION,
        "kind": "Service",
        "metadata": {"name": SERVICE},
        "spec": {"description": "the voice agents whose turns the latency SLOs measure"},
    }
    for team in teams:
        yield _notification_target(team)
    for rule in rules:
        yield _condition(rule)
        for team in teams:
            yield {
                "apiVersion": API_VERSION,
                "kind": "AlertPolicy",
                "metadata": {"name": _policy_name(rule, team)},
                "spec": {
                    "description": f"{rule.severity} the {team} team",
                    "alertWhenNoData": False,
                    "alertWhenResolved": True,
                    "alertWhenBreaching": True,
                    "conditions": [{"conditionRef": _condition_name(rule)}],
                    "notificationTargets": [{"targetRef": _target_name(team)}],
                },
            }
    for (profile, tenant_id, segment), row in sorted(
        slos.items(), key=lambda item: (item[0][0], item[0][1] or "", item[0][2])
    ):
        name = dns_label(_vocabulary(profile), tenant_id or "", _vocabulary(segment))
        team = row.owner or DEFAULT_TEAM
        scope = f"tenant {tenant_id}" if tenant_id else "every tenant without an override"
        query = (
            f"turns of profile {profile} ({scope}) whose {segment} took at most {row.budget_ms} ms"
        )
        yield {
            "apiVersion": API_VERSION,
            "kind": "SLI",
            "metadata": {"name": name, "displayName": f"{segment} within {row.budget_ms} ms"},
            "spec": {
                "description": f"share of {query.removeprefix('turns ')}",
                "ratioMetric": {
                    # Counts over the SLO's window, not ever-growing counters.
                    "counter": False,
                    "good": _metric_source("good_turns", query),
                    "total": _metric_source(
                        "turns", f"measured turns of profile {profile} ({scope})"
                    ),
                },
            },
        }
        labels = {"owner": [team], "profile": [profile], "segment": [segment]}
        yield {
            "apiVersion": API_VERSION,
            "kind": "SLO",
            "metadata": {
                "name": name,
                "displayName": f"{profile} {segment}" + (f" for {tenant_id}" if tenant_id else ""),
                "labels": labels | ({"tenant": [tenant_id]} if tenant_id else {}),
            },
            "spec": {
                "description": f"{segment} latency within its budget ({row.budget_ms} ms)",
                "service": SERVICE,
                "indicatorRef": name,
                "timeWindow": [{"duration": window, "isRolling": True}],
                "budgetingMethod": "Occurrences",
                "objectives": [
                    {
                        "displayName": f"{float(row.objective) * 100:g}% within budget",
                        "target": float(row.objective),
                    }
                ],
                "alertPolicies": [{"alertPolicyRef": _policy_name(rule, team)} for rule in rules],
            },
        }


def export_openslo(settings: Settings, out: Path) -> tuple[Path, int]:
    """Write every document as one YAML stream to `out`, or to `out`/openslo.yaml when `out` is a
    directory (an existing one, or a path written with a trailing `/`). Returns the file written
    and how many SLOs it holds."""
    documents = list(openslo_documents(settings))
    _refuse_name_collisions(documents)
    target = out / EXPORT_FILE_NAME if out.is_dir() or str(out).endswith("/") else out
    target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump_all(documents, sort_keys=False, allow_unicode=True)
    write_atomically(target, lambda path: path.write_text(text, encoding="utf-8"))
    return target, sum(1 for document in documents if document["kind"] == "SLO")


def _refuse_name_collisions(documents: list[dict]) -> None:
    """Two documents of one kind under one name would make a tool load one and drop the other."""
    seen: set[tuple[str, str]] = set()
    for document in documents:
        key = (document["kind"], document["metadata"]["name"])
        if key in seen:
            raise ValueError(f"two OpenSLO {key[0]} documents would both be named {key[1]!r}")
        seen.add(key)
