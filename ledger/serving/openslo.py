"""`ledger export openslo` (SPEC 13): the latency SLOs as OpenSLO v1 documents, for teams that run
their alerting elsewhere.

From the budgets file and the settings alone (no traffic): per budget profile and segment (first
audio included), and per tenant override, an `SLI` (a ratio of good turns, those within the
budget, to all measured turns) and an `SLO` (its objective over the rolling window, occurrences
budgeting); per burn-rate rule an `AlertCondition`, and per rule and owner team an `AlertPolicy`
that the team's SLOs name, notifying that team.
"""

from __future__ import annotations

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


def _name(*parts: str) -> str:
    return "-".join(part.replace("_", "-").lower() for part in parts if part)


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
        "metadata": {"name": _name("burn", rule.name)},
        "spec": {
            "description": f"burn rate above {rule.factor:g} over {rule.long_window} and "
            f"{rule.short_window}",
            "severity": rule.severity,
            "condition": {
                "kind": "burnrate",
                "op": "gt",
                "threshold": rule.factor,
                "lookbackWindow": rule.long_window,
                "alertAfter": rule.short_window,
            },
        },
    }


def openslo_documents(settings: Settings) -> Iterator[dict]:
    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    rules = parse_burn_rate_rules(settings.burn_rate_rules)
    window = f"{settings.slo_window_days}d"
    slos = _slos(ref.latency_budgets)
    teams = sorted({row.owner or DEFAULT_TEAM for row in slos.values()})
    for rule in rules:
        yield _condition(rule)
        for team in teams:
            yield {
                "apiVersion": API_VERSION,
                "kind": "AlertPolicy",
                "metadata": {"name": _name(rule.name, team)},
                "spec": {
                    "description": f"{rule.severity} the {team} team",
                    "alertWhenNoData": False,
                    "alertWhenResolved": True,
                    "alertWhenBreaching": True,
                    "conditions": [{"conditionRef": _name("burn", rule.name)}],
                    "notificationTargets": [{"targetRef": _name("team", team)}],
                },
            }
    for (profile, tenant_id, segment), row in sorted(
        slos.items(), key=lambda item: (item[0][0], item[0][1] or "", item[0][2])
    ):
        name = _name(profile, tenant_id or "", segment)
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
                    "counter": True,
                    "good": {
                        "metricSource": {
                            "type": "voice-ledger",
                            "spec": {"mart": "fct_latency_slo", "column": "good_turns",
                                     "query": query},
                        }
                    },
                    "total": {
                        "metricSource": {
                            "type": "voice-ledger",
                            "spec": {"mart": "fct_latency_slo", "column": "turns",
                                     "query": f"measured turns of profile {profile} ({scope})"},
                        }
                    },
                },
            },
        }  # fmt: skip
        yield {
            "apiVersion": API_VERSION,
            "kind": "SLO",
            "metadata": {
                "name": name,
                "displayName": f"{profile} {segment}" + (f" for {tenant_id}" if tenant_id else ""),
                "labels": {"owner": [team], "profile": [profile], "segment": [segment]},
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
                "alertPolicies": [_name(rule.name, team) for rule in rules],
            },
        }


def export_openslo(settings: Settings, out: Path) -> int:
    """Write every document to `out` (one YAML stream); returns how many SLOs it holds."""
    documents = list(openslo_documents(settings))
    text = yaml.safe_dump_all(documents, sort_keys=False, allow_unicode=True)
    write_atomically(out, lambda path: path.write_text(text, encoding="utf-8"))
    return sum(1 for document in documents if document["kind"] == "SLO")
