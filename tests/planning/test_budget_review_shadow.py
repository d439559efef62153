"""`ledger budgets review --from-shadow` (SPEC 13) on the planning week, whose shadow candidate
`eou-v2` ends acme-telecom's turns sooner and bright-bank's later (ledger.simulate.shadow)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ledger.commands.cli import main
from ledger.core.settings import Settings

pytestmark = pytest.mark.integration


def test_a_shadow_candidates_endpointing_change_is_reviewed_as_the_proposal(
    planning_home: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEDGER_HOME", str(planning_home.home))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(planning_home.reference_dir))
    result = CliRunner().invoke(main, ["budgets", "review", "--from-shadow", "eou-v2"])
    assert result.exit_code == 0, result.output
    print("SHADOW", result.output.splitlines())
