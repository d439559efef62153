"""FX rates that start after the usage they must convert stop the build (issue 13, point 7).

The simulated traffic of 2026-11-15 and 16 (four tenants, as `ledger_built_warehouse`) prices
deepgram, openai and others in USD, and one tenant's price plan is in USD. With the USD rates of
fx_rates.csv starting on 2026-11-16, the amounts of 2026-11-15 have no rate on or before their
date: the dbt test `assert_fx_rates_cover_the_usage_they_convert` fails the build with the
currency and the dates, and nothing is published (it used to publish them as unpriced).
"""

from __future__ import annotations

import csv
import shutil
from datetime import date
from pathlib import Path

import pytest

from ledger.core.settings import REPO_ROOT, Settings

pytestmark = pytest.mark.integration


def test_fx_rates_starting_after_the_usage_fail_the_build_naming_currency_and_dates(
    tmp_path: Path,
):
    from ledger.commands.build import run_build
    from ledger.simulate import simulate

    reference = tmp_path / "reference"
    shutil.copytree(REPO_ROOT / "data" / "reference", reference)
    with (reference / "fx_rates.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    kept = [rows[0]] + [r for r in rows[1:] if not (r[1] == "USD" and r[0] < "2026-11-16")]
    with (reference / "fx_rates.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows(kept)
    settings = Settings(home=tmp_path / "home", reference_dir=reference)
    settings.ensure_dirs()
    simulate(settings.landing_dir, tenants=4, days=2, start=date(2026, 11, 15), sessions_per_day=4)

    outcome = run_build(settings)

    assert not outcome.success
    text = "\n".join(outcome.lines)
    assert (
        "FX rates do not cover the amounts they convert: USD revenue, usage dated 2026-11-15 to "
        "2026-11-15 (UTC, 30 lines) precede the first USD rate in fx_rates.csv, 2026-11-16. Add "
        "rates dated on or before those dates to fx_rates.csv, then `ledger build`."
    ) in text
    assert outcome.lines[-1].startswith("build FAILED")
    assert not settings.published_path.exists()
