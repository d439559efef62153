"""SPEC 13's reference data: the SLO objective in latency_budgets.yaml (per profile, a tenant may
override) and spend_budgets.csv, validated like the other files (file, line, rule)."""

from __future__ import annotations

import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from ledger.core.settings import REPO_ROOT
from ledger.reference import ReferenceDataError, load_reference, write_reference_tables

SHIPPED = REPO_ROOT / "data" / "reference"


@pytest.fixture
def ref_dir(tmp_path: Path) -> Path:
    target = tmp_path / "reference"
    shutil.copytree(SHIPPED, target)
    (target / "spend_budgets.csv").unlink(missing_ok=True)
    return target


def _problems(ref_dir: Path) -> list[str]:
    with pytest.raises(ReferenceDataError) as caught:
        load_reference(ref_dir)
    return [str(problem) for problem in caught.value.problems]


def _edit_budgets(ref_dir: Path, old: str, new: str) -> None:
    path = ref_dir / "latency_budgets.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_objective_defaults_to_95_and_follows_profile_and_tenant(ref_dir: Path) -> None:
    _edit_budgets(
        ref_dir,
        "  embodied:\n    first_audio_ms: 500\n",
        "  embodied:\n    first_audio_ms: 500\n    objective: 0.99\n",
    )
    _edit_budgets(
        ref_dir,
        "  lumen-health:\n    first_audio_ms: 450\n",
        "  lumen-health:\n    first_audio_ms: 450\n    objective: 0.9\n",
    )
    ref = load_reference(ref_dir)
    by_key = {(r.scenario, r.tenant_id, r.segment): r for r in ref.latency_budgets}
    assert (
        by_key["customer_service", None, "llm_ttft"].profile,
        by_key["customer_service", None, "llm_ttft"].objective,
    ) == ("conversational", Decimal("0.95"))
    assert (
        by_key["hardware", None, "first_audio"].profile,
        by_key["hardware", None, "first_audio"].objective,
    ) == ("embodied", Decimal("0.99"))
    assert by_key["hardware", "lumen-health", "endpointing"].objective == Decimal("0.9")
    with duckdb.connect() as con:
        write_reference_tables(con, ref)
        assert con.execute(
            "select profile, objective from reference.latency_budgets "
            "where scenario = 'companion' and tenant_id is null and segment = 'stt_final'"
        ).fetchall() == [("embodied", Decimal("0.9900"))]


@pytest.mark.parametrize("value", ["1", "0", "1.5", "high", "0.99999"])
def test_a_bad_objective_names_file_line_and_rule(ref_dir: Path, value: str) -> None:
    _edit_budgets(
        ref_dir,
        "  embodied:\n    first_audio_ms: 500\n",
        f"  embodied:\n    first_audio_ms: 500\n    objective: {value}\n",
    )
    found = _problems(ref_dir)
    assert len(found) == 1
    assert found[0].startswith(
        "latency_budgets.yaml line 18 [bad_objective]: profiles.embodied.objective"
    )


def test_spend_budgets_load_with_and_without_provider(ref_dir: Path) -> None:
    (ref_dir / "spend_budgets.csv").write_text(
        "tenant_id,month,amount,currency\nacme-telecom,2026-11,1500.50,CNY\nbright-bank,2026-11,200,USD\n"
    )
    ref = load_reference(ref_dir)
    assert [
        (r.line_number, r.tenant_id, r.month, r.amount, r.currency, r.provider)
        for r in ref.spend_budgets
    ] == [
        (2, "acme-telecom", date(2026, 11, 1), Decimal("1500.50"), "CNY", None),
        (3, "bright-bank", date(2026, 11, 1), Decimal("200"), "USD", None),
    ]
    (ref_dir / "spend_budgets.csv").write_text(
        "tenant_id,month,amount,currency,provider\nacme-telecom,2026-11,1500,CNY,\nacme-telecom,2026-11,300,CNY,deepseek\n"
    )
    ref = load_reference(ref_dir)
    assert [(r.tenant_id, r.provider, r.amount) for r in ref.spend_budgets] == [
        ("acme-telecom", None, Decimal("1500")),
        ("acme-telecom", "deepseek", Decimal("300")),
    ]
    with duckdb.connect() as con:
        write_reference_tables(con, ref)
        assert con.execute(
            "select line_number, tenant_id, budget_month, amount, provider from reference.spend_budgets order by 1"
        ).fetchall() == [
            (2, "acme-telecom", date(2026, 11, 1), Decimal("1500.000000000000"), None),
            (3, "acme-telecom", date(2026, 11, 1), Decimal("300.000000000000"), "deepseek"),
        ]


def test_bad_spend_budgets_name_file_line_and_rule(ref_dir: Path) -> None:
    (ref_dir / "spend_budgets.csv").write_text(
        "tenant_id,month,amount,currency,provider\n"
        "acme-telecom,2026-13,100,CNY,\n"
        "acme-telecom,2026-11,-5,CNY,\n"
        "acme-telecom,2026-12,100,EUR,\n"
        "bright-bank,2026-11,100,CNY,\n"
        "bright-bank,2026-11,120,CNY,\n"
    )
    assert _problems(ref_dir) == [
        "spend_budgets.csv line 2 [bad_month]: month is not a calendar month: '2026-13'; write "
        "YYYY-MM such as 2026-11",
        "spend_budgets.csv line 3 [negative_price]: amount must not be negative, got -5; enter "
        "the list amount (0 if free)",
        "spend_budgets.csv line 4 [missing_fx]: currency EUR is used here but fx_rates.csv has "
        "no EUR rows, so these amounts cannot be converted to CNY; add rows 'date,EUR,rate' (1 "
        "EUR = rate CNY) starting on or before the first effective_from in EUR",
        "spend_budgets.csv lines 5 and 6 [duplicate_budget]: lines 5 and 6 both budget "
        "bright-bank in 2026-11; keep one",
    ]
