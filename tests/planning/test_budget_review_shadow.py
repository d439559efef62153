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
    lines = result.output.splitlines()
    # The newest week's median changes, weighted by compared turns: 23 ms sooner. Every
    # endpointing budget and recorded endpointing moves by it: the same turns breach, and 23 ms
    # of slack under first audio goes back to the other teams.
    assert lines[1:3] == [
        "shadow candidate eou-v2: endpointing -23 ms, added to every endpointing budget and to "
        "the recorded endpointing and first audio",
        "slack: conversational: endpointing (audio) -23 ms; slack under the first-audio budget "
        "(1000 ms) 120 -> 143 ms",
    ]
    assert lines[4] == (
        "slack: embodied: endpointing (audio) -23 ms; slack under the first-audio budget (500 ms) "
        "0 -> 23 ms"
    )
    assert lines[-2:] == [
        "acme-telecom conversational endpointing (audio): budget 250 -> 227 ms, breaching 1.4% -> "
        "1.4% of 621 turns, error budget left 71.0% -> 71.0%",
        "bright-bank conversational endpointing (audio): budget 250 -> 227 ms, breaching 2.7% -> "
        "2.7% of 334 turns, error budget left 46.1% -> 46.1%",
    ]
