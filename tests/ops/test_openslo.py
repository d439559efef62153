"""`ledger export openslo` (SPEC 13): the latency SLOs as OpenSLO v1 documents that parse with a
YAML loader and carry the OpenSLO v1 field names, from the shipped budgets file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ledger.commands.cli import main
from ledger.core.settings import REPO_ROOT

V1_KINDS = {"SLO", "SLI", "AlertPolicy", "AlertCondition"}


def test_the_slos_export_as_openslo_v1_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEDGER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(REPO_ROOT / "data" / "reference"))
    monkeypatch.setenv("LEDGER_BURN_RATE_RULES", "page:14.4:1h:5m ticket:1:3d:6h")
    out = tmp_path / "openslo.yaml"
    result = CliRunner().invoke(main, ["export", "openslo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    # 2 profiles x 6 budget lines, for the defaults and for lumen-health's override.
    assert result.output == f"24 SLOs as OpenSLO v1 documents: {out}\n"

    documents = list(yaml.safe_load_all(out.read_text()))
    assert {d["apiVersion"] for d in documents} == {"openslo/v1"}
    assert {d["kind"] for d in documents} == V1_KINDS
    slos = {d["metadata"]["name"]: d for d in documents if d["kind"] == "SLO"}
    slis = {d["metadata"]["name"]: d for d in documents if d["kind"] == "SLI"}
    policies = {d["metadata"]["name"] for d in documents if d["kind"] == "AlertPolicy"}
    conditions = {d["metadata"]["name"]: d for d in documents if d["kind"] == "AlertCondition"}
    assert len(slos) == len(slis) == 24
    assert policies == {
        f"{rule}-{team}"
        for rule in ("page-1h-5m", "ticket-3d-6h")
        for team in ("audio", "inference", "platform", "unowned")
    }
    assert conditions["burn-page-1h-5m"]["spec"] == {
        "description": "burn rate above 14.4 over 1h and 5m",
        "severity": "page",
        "condition": {
            "kind": "burnrate",
            "op": "gt",
            "threshold": 14.4,
            "lookbackWindow": "1h",
            "alertAfter": "5m",
        },
    }
    for slo in slos.values():
        spec = slo["spec"]
        assert set(spec) == {
            "description",
            "service",
            "indicatorRef",
            "timeWindow",
            "budgetingMethod",
            "objectives",
            "alertPolicies",
        }
        assert spec["service"] == "voice-agent"
        assert spec["indicatorRef"] in slis
        assert spec["timeWindow"] == [{"duration": "28d", "isRolling": True}]
        assert spec["budgetingMethod"] == "Occurrences"
        assert set(spec["alertPolicies"]) <= policies
        assert [set(o) for o in spec["objectives"]] == [{"displayName", "target"}]

    endpointing = slos["conversational-endpointing"]
    assert endpointing["metadata"]["labels"] == {
        "owner": ["audio"],
        "profile": ["conversational"],
        "segment": ["endpointing"],
    }
    assert endpointing["spec"]["objectives"] == [
        {"displayName": "95% within budget", "target": 0.95}
    ]
    assert endpointing["spec"]["alertPolicies"] == ["page-1h-5m-audio", "ticket-3d-6h-audio"]
    assert slis["conversational-endpointing"]["spec"]["ratioMetric"]["good"]["metricSource"][
        "spec"
    ]["query"] == (
        "turns of profile conversational (every tenant without an override) whose endpointing "
        "took at most 250 ms"
    )
    # lumen-health's override (llm_ttft 200 ms, first audio 450 ms) is an SLO of its own.
    assert slos["conversational-lumen-health-llm-ttft"]["spec"]["description"] == (
        "llm_ttft latency within its budget (200 ms)"
    )
    assert slos["embodied-first-audio"]["spec"]["alertPolicies"] == [
        "page-1h-5m-unowned",
        "ticket-3d-6h-unowned",
    ]
