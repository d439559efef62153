"""Shadow mode (SPEC 11): the comparison marts and the simulator's shadow candidate.

The arithmetic (pairing, pricing, quantiles, the exact sign tests and their 5% threshold, the
median interval) is pinned by the dbt unit tests
in dbt/models/*/shadow/_shadow__models.yml, run by every `dbt build`; here: that they ran, that the
simulator's candidate leaves production untouched, and that the demo shows both verdicts.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb

from ledger.core.settings import Settings
from ledger.simulate import simulate
from tests.support.homes import dbt_run_results

SHADOW_UNIT_TESTS = {
    "shadow_turns_pair_production_and_candidate_on_the_same_turn",
    "shadow_verdicts_rest_on_exact_sign_tests_and_the_turn_count",
    "shadow_weekly_comparison_recomputes_over_the_week",
    "shadow_weekly_verdict_with_enough_turns",
}


def published(settings: Settings, sql: str) -> list[tuple]:
    with duckdb.connect(str(settings.published_path), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_every_shadow_unit_test_passes_in_the_build(planning_home) -> None:
    statuses = {
        unique_id.rsplit(".", 1)[-1]: status
        for unique_id, status in dbt_run_results(planning_home).items()
        if unique_id.startswith("unit_test.")
    }
    assert {name: statuses.get(name) for name in SHADOW_UNIT_TESTS} == dict.fromkeys(
        SHADOW_UNIT_TESTS, "pass"
    )


def test_the_shadow_candidate_never_changes_production_traffic(tmp_path: Path) -> None:
    # Duplicates and bad rows are drawn over all events, shadow ones included: none here.
    options = {
        "tenants": 2,
        "days": 1,
        "start": date(2026, 11, 2),
        "sessions_per_day": 4,
        "bad_row_share": 0.0,
        "duplicate_share": 0.0,
    }
    with_shadow = simulate(tmp_path / "with", shadow=True, **options)
    without = simulate(tmp_path / "without", shadow=False, **options)
    shadow_lines = 0
    for path in without.files:
        relative = path.relative_to(tmp_path / "without")
        lines = (tmp_path / "with" / relative).read_text().splitlines()
        kept = [line for line in lines if '"event_type":"turn.shadow"' not in line]
        shadow_lines += len(lines) - len(kept)
        assert kept == path.read_text().splitlines()
    assert shadow_lines == with_shadow.events - without.events > 0


def test_the_simulated_week_shows_a_switch_and_a_keep(planning_home) -> None:
    # acme-telecom: the candidate ends every one of 621 turns sooner (sign test p ~ 0) and avoids 5
    # of production's 10 false interruptions, adding none (p = 2/2^5 = 0.0625: not significant on
    # its own, and not worse) -> switch. bright-bank: sooner too, but it cuts in on 35 turns
    # production let play and avoids none (4 -> 39 false interruptions) -> keep; its outbound
    # cell has fewer than 200 compared turns. The candidate endpoints at 0.85 (+/-5%) of
    # production, so the interval of the median change scales with production's endpointing
    # (about 0.58 of its budget since the simulator's latency tuning: -30 ms became -23 ms).
    rows = published(
        planning_home,
        """
        select tenant_id, scenario, compared_turns, endpointing_faster_turns,
            endpointing_slower_turns, endpointing_delta_ci_low_ms, endpointing_delta_ci_high_ms,
            production_false_interruptions, candidate_false_interruptions,
            false_interruptions_avoided, false_interruptions_added, false_interruption_p_value,
            waste_avoided_cost, waste_added_cost, endpointing_significance,
            false_interruption_significance, verdict
        from marts.fct_shadow_comparison_weekly
        where iso_week = '2026-W45' and candidate = 'eou-v2'
        order by tenant_id, scenario
        """,
    )
    assert rows == [
        ("acme-telecom", "customer_service", 621, 621, 0, -23.446, -22.299, 10, 5, 5, 0, 0.0625,
         Decimal("0.0374752"), Decimal(0), "better", "unclear", "switch"),
        ("bright-bank", "customer_service", 277, 277, 0, -24.305, -22.785, 4, 39, 0, 35, 0.0,
         Decimal(0), Decimal("0.4571216"), "better", "worse", "keep"),
        ("bright-bank", "outbound", 57, 57, 0, -24.365, -20.67, 1, 9, 0, 8, 0.007813,
         Decimal(0), Decimal("0.08051322"), "better", "worse", "insufficient"),
    ]  # fmt: skip
