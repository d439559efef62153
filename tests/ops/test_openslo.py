"""`ledger export openslo` (SPEC 13): the latency SLOs as OpenSLO v1 documents that OpenSLO tools
load: checked by tests/support/openslo_spec.py, written from the OpenSLO v1 specification, on the
shipped budgets and on tenant ids that are not DNS labels."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ledger.commands.cli import main
from ledger.core.settings import REPO_ROOT
from tests.support.openslo_spec import violations

V1_KINDS = {"Service", "SLO", "SLI", "AlertPolicy", "AlertCondition", "AlertNotificationTarget"}
LONG_TENANT = "tenant-" + "x" * 63  # 70 characters


def _export(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, reference: Path, out: Path):
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(reference))
    monkeypatch.setenv("LEDGER_BURN_RATE_RULES", "page:14.4:1h:5m ticket:1:3d:6h")
    return CliRunner().invoke(main, ["export", "openslo", "--out", str(out)])


def test_the_slos_export_as_openslo_v1_documents_that_openslo_tools_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "openslo.yaml"
    result = _export(monkeypatch, tmp_path, REPO_ROOT / "data" / "reference", out)
    assert result.exit_code == 0, result.output
    # 2 profiles x 6 budget lines, for the defaults and for lumen-health's override.
    assert result.output == f"24 SLOs as OpenSLO v1 documents: {out}\n"

    documents = list(yaml.safe_load_all(out.read_text()))
    assert violations(documents) == []
    assert {d["kind"] for d in documents} == V1_KINDS
    slos = {d["metadata"]["name"]: d for d in documents if d["kind"] == "SLO"}
    slis = {d["metadata"]["name"]: d for d in documents if d["kind"] == "SLI"}
    policies = {d["metadata"]["name"]: d for d in documents if d["kind"] == "AlertPolicy"}
    conditions = {d["metadata"]["name"]: d for d in documents if d["kind"] == "AlertCondition"}
    targets = {
        d["metadata"]["name"]: d for d in documents if d["kind"] == "AlertNotificationTarget"
    }
    assert len(slos) == len(slis) == 24
    teams = ("audio", "inference", "platform", "unowned")
    assert set(policies) == {
        f"{rule}-{team}" for rule in ("page-1h-5m", "ticket-3d-6h") for team in teams
    }
    assert set(targets) == {f"team-{team}" for team in teams}
    assert targets["team-audio"]["spec"] == {
        "description": "the audio team's alert webhook (LEDGER_OWNER_WEBHOOKS, else LEDGER_WEBHOOK_URL)",
        "target": "webhook",
    }
    assert policies["page-1h-5m-audio"]["spec"]["conditions"] == [
        {"conditionRef": "burn-page-1h-5m"}
    ]
    assert policies["page-1h-5m-audio"]["spec"]["notificationTargets"] == [
        {"targetRef": "team-audio"}
    ]
    # The long window is what OpenSLO evaluates; alerting waits for nothing more (alertAfter is a
    # hold, not a second window); the short window is carried as an annotation.
    page = conditions["burn-page-1h-5m"]
    assert page["metadata"]["annotations"] == {"voice-ledger/short-window": "5m"}
    assert page["spec"] == {
        "description": "burn rate above 14.4 over 1h, and over 5m (the short window: annotation "
        "voice-ledger/short-window)",
        "severity": "page",
        "condition": {
            "kind": "burnrate",
            "op": "gt",
            "threshold": 14.4,
            "lookbackWindow": "1h",
            "alertAfter": "0m",
        },
    }
    for slo in slos.values():
        assert slo["spec"]["service"] == "voice-agent"
        assert slo["spec"]["timeWindow"] == [{"duration": "28d", "isRolling": True}]
        assert slo["spec"]["budgetingMethod"] == "Occurrences"

    endpointing = slos["conversational-endpointing"]
    assert endpointing["metadata"]["labels"] == {
        "owner": ["audio"],
        "profile": ["conversational"],
        "segment": ["endpointing"],
    }
    assert endpointing["spec"]["objectives"] == [
        {"displayName": "95% within budget", "target": 0.95}
    ]
    assert endpointing["spec"]["alertPolicies"] == [
        {"alertPolicyRef": "page-1h-5m-audio"},
        {"alertPolicyRef": "ticket-3d-6h-audio"},
    ]
    ratio = slis["conversational-endpointing"]["spec"]["ratioMetric"]
    assert ratio["counter"] is False  # counts over the window, not ever-growing counters
    assert ratio["good"]["metricSource"]["spec"]["query"] == (
        "turns of profile conversational (every tenant without an override) whose endpointing "
        "took at most 250 ms"
    )
    # lumen-health's override (llm_ttft 200 ms, first audio 450 ms) is an SLO of its own.
    assert slos["conversational-lumen-health-llm-ttft"]["spec"]["description"] == (
        "llm_ttft latency within its budget (200 ms)"
    )
    assert slos["embodied-first-audio"]["spec"]["alertPolicies"] == [
        {"alertPolicyRef": "page-1h-5m-unowned"},
        {"alertPolicyRef": "ticket-3d-6h-unowned"},
    ]


def test_tenant_ids_that_are_not_dns_labels_get_valid_names_that_never_collide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = tmp_path / "reference"
    shutil.copytree(REPO_ROOT / "data" / "reference", reference)
    budgets = reference / "latency_budgets.yaml"
    overrides = "".join(
        f"  {tenant}:\n    segments:\n      llm_ttft: {{budget_ms: 210}}\n"
        for tenant in ("acme.eu", "big_customer-eu", "big-customer-eu", LONG_TENANT)
    )
    budgets.write_text(budgets.read_text() + overrides)

    out = tmp_path / "exports"
    out.mkdir()
    result = _export(monkeypatch, tmp_path, reference, out)  # --out DIR, as the docs show it

    assert result.exit_code == 0, result.output
    # 24 as shipped, and 12 (2 profiles x 6 budget lines) for each of the four tenants.
    assert result.output == f"72 SLOs as OpenSLO v1 documents: {out / 'openslo.yaml'}\n"
    documents = list(yaml.safe_load_all((out / "openslo.yaml").read_text()))
    assert violations(documents) == []
    names = {
        d["metadata"]["labels"]["tenant"][0]: d["metadata"]["name"]
        for d in documents
        if d["kind"] == "SLO" and d["metadata"]["labels"].get("tenant")
        and d["metadata"]["labels"]["profile"] == ["conversational"]
        and d["metadata"]["labels"]["segment"] == ["llm_ttft"]
    }  # fmt: skip
    # A tenant id that is a label keeps it; the others are folded and told apart by a hash.
    assert names["big-customer-eu"] == "conversational-big-customer-eu-llm-ttft"
    assert names["lumen-health"] == "conversational-lumen-health-llm-ttft"
    assert names["acme.eu"] == "conversational-acme-eu-llm-ttft-82268f2f"
    assert names["big_customer-eu"] == "conversational-big-customer-eu-llm-ttft-d2ba5894"
    assert names[LONG_TENANT] == "conversational-tenant-" + "x" * 23 + "-llm-ttft-404f81ec"
    assert len(set(names.values())) == 5
    # Stable: the same tenant id gets the same name in the next export.
    again = tmp_path / "again.yaml"
    assert _export(monkeypatch, tmp_path, reference, again).exit_code == 0
    assert again.read_text() == (out / "openslo.yaml").read_text()


def test_the_checker_finds_what_openslo_tools_refuse():
    """The last export before the fix: bare-string policy names, a target never exported, an
    unsanitised tenant id; the checker names each."""
    documents = [
        {
            "apiVersion": "openslo/v1",
            "kind": "AlertPolicy",
            "metadata": {"name": "page-1h-5m-audio"},
            "spec": {
                "conditions": [{"conditionRef": "burn-page-1h-5m"}],
                "notificationTargets": [{"targetRef": "team-audio"}],
            },
        },
        {
            "apiVersion": "openslo/v1",
            "kind": "SLO",
            "metadata": {"name": "conversational-acme.eu-llm-ttft"},
            "spec": {
                "service": "voice-agent",
                "indicatorRef": "conversational-acme.eu-llm-ttft",
                "budgetingMethod": "Occurrences",
                "objectives": [{"target": 0.95}],
                "alertPolicies": ["page-1h-5m-audio"],
            },
        },
    ]
    assert violations(documents) == [
        "SLO 'conversational-acme.eu-llm-ttft': metadata.name 'conversational-acme.eu-llm-ttft' "
        "is not a DNS-1123 label of at most 63 characters",
        "SLO 'conversational-acme.eu-llm-ttft': alertPolicies item 'page-1h-5m-audio' is neither "
        "an alertPolicyRef nor inline",
        "AlertPolicy 'page-1h-5m-audio': conditionRef 'burn-page-1h-5m' names no AlertCondition",
        "AlertPolicy 'page-1h-5m-audio': targetRef 'team-audio' names no AlertNotificationTarget",
        "SLO 'conversational-acme.eu-llm-ttft': indicatorRef 'conversational-acme.eu-llm-ttft' "
        "names no SLI",
    ]
