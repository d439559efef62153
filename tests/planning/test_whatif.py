"""`ledger whatif` (SPEC 11): a past period repriced under candidate reference data, on the
boards fixture (tests/conftest.py: three sessions whose amounts are worked out by hand)."""

from __future__ import annotations

import csv
import shutil
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

from ledger.commands.whatif import WhatIfError, load_route_map, what_if, write_outputs
from ledger.core.settings import Settings

pytestmark = pytest.mark.integration

M = Decimal(1_000_000)


def fingerprint(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def test_the_current_reference_data_gives_no_difference(boards_home: Settings, tmp_path) -> None:
    published = fingerprint(boards_home.published_path.parent)
    result = what_if(boards_home, boards_home.reference_dir, scratch_dir=tmp_path)
    assert [(row.tenant_id, row.sessions) for row in result.tenants] == [
        ("acme-telecom", 2),
        ("kiddo-toys", 1),
    ]
    for row in result.tenants:
        assert (row.cost_difference, row.revenue_difference, row.margin_difference) == (0, 0, 0)
    # acme: 0.0144 + 0.6838 cost and 0.60 + 1.80 revenue; kiddo: 0.125 and 1.60 (conftest).
    assert [(row.cost_now, row.revenue_now) for row in result.tenants] == [
        (Decimal("0.6982"), Decimal("2.40")),
        (Decimal("0.125"), Decimal("1.60")),
    ]
    assert fingerprint(boards_home.published_path.parent) == published
    assert list(tmp_path.iterdir()) == []  # the scratch copy is gone


def test_a_price_change_and_a_route_map_give_the_exact_difference(
    boards_home: Settings, tmp_path: Path
) -> None:
    candidate = tmp_path / "candidate"
    shutil.copytree(boards_home.reference_dir, candidate)
    rate_card = candidate / "rate_card.csv"
    rate_card.write_text(
        rate_card.read_text().replace(
            "qwen,qwen-turbo,llm.output_tokens,0.60,", "qwen,qwen-turbo,llm.output_tokens,0.80,"
        )
    )
    plans = candidate / "price_plans.csv"
    plans.write_text(plans.read_text().replace("kiddo-toys,0.90,0.10,", "kiddo-toys,0.90,0.25,"))
    route_map = tmp_path / "routes.csv"
    route_map.write_text("phase,route,provider,model\nsubstantive,large,qwen,qwen-turbo\n")

    result = what_if(boards_home, candidate, route_map=route_map, scratch_dir=tmp_path)

    # acme-s1's substantive turn moves from deepseek-chat to qwen-turbo at the new output price.
    deepseek = 100_000 * Decimal("2.00") / M + 200_000 * Decimal("0.50") / M + 10_000 * 8 / M
    qwen = (
        100_000 * Decimal("0.30") / M + 200_000 * Decimal("0.06") / M + 10_000 * Decimal("0.80") / M
    )
    # kiddo-s1's 25000 output tokens of qwen-turbo cost 0.20/M more; its session fee 0.15 more.
    kiddo_cost = 25_000 * (Decimal("0.80") - Decimal("0.60")) / M
    acme, kiddo = result.tenants
    assert (acme.cost_difference, acme.revenue_difference) == (qwen - deepseek, 0)
    assert acme.cost_difference == Decimal("-0.33")
    assert (kiddo.cost_difference, kiddo.revenue_difference) == (kiddo_cost, Decimal("0.15"))
    assert kiddo.margin_difference == Decimal("0.15") - kiddo_cost == Decimal("0.145")

    csv_path, xlsx_path = write_outputs(result, tmp_path / "out" / "whatif")
    lines = list(csv.reader(csv_path.open()))
    assert lines[0][0].startswith(f"# candidate reference data: {candidate} (sha256 ")
    assert lines[1] == [f"# route map: {route_map}"]
    assert lines[4][:5] == [
        "tenant_id", "sessions", "cost_now", "cost_candidate", "cost_difference"
    ]  # fmt: skip
    assert [Decimal(value) for value in lines[6][2:5]] == [
        Decimal("0.125"),
        Decimal("0.130"),
        Decimal("0.005"),
    ]
    sheet = openpyxl.load_workbook(xlsx_path)["whatif"]
    values = list(sheet.iter_rows(values_only=True))
    assert values[6][:5] == ("acme-telecom", 2, 0.7, 0.37, -0.33)  # shown to the cent
    assert values[7][:5] == ("kiddo-toys", 1, 0.12, 0.13, 0.0)


def test_a_bad_route_map_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "routes.csv"
    path.write_text("phase,route,provider,model\ngreeting,small,,qwen-turbo\n")
    with pytest.raises(WhatIfError, match=r"routes.csv line 2 \[missing_value\]"):
        load_route_map(path)
    path.write_text("phase,provider,model\n")
    with pytest.raises(WhatIfError, match=r"routes.csv line 1 \[bad_header\]"):
        load_route_map(path)
