"""The dbt ledger models (SPEC sections 4 and 5), end to end on one small warehouse.

`ledger_built_warehouse` (tests/pipeline/conftest.py) ingests two simulated days of four tenants,
adds hand-made sessions for the lifecycle and pricing edge cases, loads the shipped reference data
and runs `dbt build`, which also runs every dbt unit test and data test. The tests here then check
exact values, and re-compute every session of the warehouse by hand with `decimal.Decimal` to
compare with the export (tests/support/ledger_by_hand.py).

The rounding rule the models document and the hand computation mirrors (DuckDB DECIMAL casts round half away
from zero, Python's ROUND_HALF_UP): unit price in the reporting currency = round(unit_price x fx,
20 places); line amount = round(quantity x that, 12 places); revenue = round((fee + billable
seconds x price_per_second) x fx, 12); totals sum 12-place amounts without further rounding.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from datetime import date, datetime
from decimal import Decimal

import pyarrow.parquet as pq
import pytest
import yaml

from ledger.contract.fields import raw_event_columns
from ledger.core.settings import DBT_PROJECT_DIR
from ledger.reference import load_reference
from ledger.serving.export import export_session_ledger
from tests.support.ledger_by_hand import check_every_session, exact_ratio

# ---- the build itself ----------------------------------------------------------------------------


def test_dbt_build_passes_every_model_unit_test_and_data_test(ledger_built_warehouse):
    results = ledger_built_warehouse.dbt_results
    by_type: dict[str, list[str]] = defaultdict(list)
    for unique_id, status in results.items():
        resource_type, _project, *rest = unique_id.split(".")
        # unit_test.<project>.<model>.<name>; test.<project>.<name>[.<hash>]; model.<project>.<name>
        name = rest[-1] if resource_type == "unit_test" else rest[0]
        by_type[resource_type].append(name)
        assert status in {"success", "pass"}, unique_id
    assert by_type["model"]
    unit_tests = set(by_type["unit_test"])
    assert {
        "test_price_change_inside_a_session_prices_each_event_at_its_own_rate",
        "test_fx_uses_the_latest_rate_on_or_before_the_utc_date",
        "test_billing_increments_round_duration_up",
        "test_interruption_waste_falls_back_to_the_sessions_latest_usage",
        "test_cache_hits_cost_nothing_and_save_the_full_price",
        "test_session_without_start_opens_at_its_earliest_event_as_unknown",
        "test_session_ledger_sums_priced_lines_and_derives_margin",
    } <= unit_tests
    assert {
        "assert_total_cost_equals_sum_of_components",
        "assert_no_money_column_is_a_float",
        "assert_every_raw_session_in_ledger_exactly_once",
        "assert_margin_marts_sum_to_the_session_ledger",
    } <= set(by_type["test"])


def test_dbt_source_columns_are_the_contracts_raw_event_columns():
    sources = yaml.safe_load((DBT_PROJECT_DIR / "models/staging/_staging__sources.yml").read_text())
    raw = next(source for source in sources["sources"] if source["name"] == "raw")
    events = next(table for table in raw["tables"] if table["name"] == "events")
    declared = [(column["name"], column["data_type"]) for column in events["columns"]]
    assert declared == [(name, kind.lower()) for name, kind in raw_event_columns()]


def test_money_columns_of_the_marts_are_decimal_38_12(ledger_query):
    rows = ledger_query(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_schema = 'marts' and table_name in ('fct_session_ledger', "
        "'fct_tenant_daily_margin', 'fct_tenant_weekly_margin', 'fct_cost_by_phase_route', "
        "'fct_usage_cost_daily') "
        "and (column_name like '%\\_cost' escape '\\' or column_name like '%savings' "
        "or column_name = 'cost' "
        "or column_name in ('revenue', 'gross_margin'))"
    )
    assert len(rows) > 40
    assert {row["data_type"] for row in rows} == {"DECIMAL(38,12)"}


def test_custom_schemas_are_named_exactly(ledger_query):
    schemas = {
        row["schema_name"]
        for row in ledger_query("select schema_name from information_schema.schemata")
    }
    assert {"staging", "intermediate", "marts", "raw", "reference"} <= schemas
    assert not any(name.startswith("main_") for name in schemas)


# ---- hand-made sessions, worked out by hand --------------------------------------------------------


def _ledger_row(ledger_query, session_id: str) -> dict:
    (row,) = ledger_query(
        "select * from marts.fct_session_ledger where session_id = ?", [session_id]
    )
    return row


def test_price_change_inside_a_session_prices_each_call_at_its_rate(ledger_query):
    row = _ledger_row(ledger_query, "hand-price-change")
    # turn 0 at the old deepseek rates: 1000 x 2.00 + 500 x 0.50 + 200 x 8.00 per 1M = 0.00385;
    # turn 1 at the new ones: 1000 x 1.60 + 500 x 0.50 + 200 x 6.00 per 1M = 0.00305.
    assert row["llm_cost"] == Decimal("0.006900000000")
    assert row["asr_cost"] == Decimal("0.014760000000")  # 61.5 s x 0.0144 / 60
    assert row["infra_cost"] == Decimal("0.045000000000")  # 1.5 path minutes x 0.03
    assert row["total_cost"] == Decimal("0.066660000000")
    # 105 s in 60 s increments bills 120 s at 0.60 per minute.
    assert (row["duration_seconds"], row["billable_seconds"]) == (Decimal("105"), 120)
    assert row["revenue"] == Decimal("1.200000000000")
    assert row["gross_margin"] == Decimal("1.133340000000")
    assert row["gross_margin_pct"] == Decimal("94.445000")
    # Turn 2 has no LLM usage: its 100 wasted tokens take turn 1's output price (6.00 per 1M).
    assert row["interruption_waste_cost"] == Decimal("0.000600000000")
    # 500 x (2.00 - 0.50) + 500 x (1.60 - 0.50) per 1M.
    assert row["llm_cache_savings"] == Decimal("0.001300000000")
    assert (row["business_date"], row["iso_week"]) == (date(2026, 11, 16), "2026-W47")
    assert (row["turn_count"], row["interruption_count"], row["false_interruption_count"]) == (
        3,
        1,
        1,
    )
    assert row["has_unpriced_usage"] is False


def test_usd_plan_and_usd_rates_convert_at_the_days_fx_rate(ledger_query):
    row = _ledger_row(ledger_query, "hand-usd")
    # USD 7.2222 on 2026-11-16. gpt-4.1-mini: (1000 x 0.40 + 1000 x 0.10 + 500 x 1.60) per 1M USD.
    assert row["llm_cost"] == Decimal("0.009388860000")
    assert row["tts_cost"] == Decimal("0")  # a cache hit costs nothing
    assert row["tts_cache_savings"] == Decimal("0.072222000000")  # 200 x 0.05 / 1000 x 7.2222
    assert row["llm_cache_savings"] == Decimal("0.002166660000")  # 1000 x (0.40 - 0.10) / 1M
    # 30.000001 s bills 31 s at USD 0.12 per minute: 0.062 USD.
    assert row["billable_seconds"] == 31
    assert row["revenue"] == Decimal("0.447776400000")
    assert row["gross_margin_pct"] == Decimal("97.903226")


def test_session_lifecycle_rules(ledger_query):
    no_start = _ledger_row(ledger_query, "hand-no-start")
    assert (no_start["scenario"], no_start["pipeline"], no_start["has_start"]) == (
        "unknown",
        "unknown",
        False,
    )
    assert no_start["started_at"] == datetime(2026, 11, 16, 5, 0)
    assert no_start["revenue"] == Decimal("0.500000000000")  # 0.05 + 60 s x 0.45 / 60

    no_end = _ledger_row(ledger_query, "hand-no-end")
    assert (no_end["end_reason"], no_end["ended_at"], no_end["is_open"]) == (
        "missing_end",
        datetime(2026, 11, 16, 20, 10),
        False,
    )
    assert no_end["revenue"] == Decimal("6.000000000000")  # 600 s at 0.60 per minute

    still_open = _ledger_row(ledger_query, "hand-open")
    assert still_open["is_open"] is True
    assert (still_open["ended_at"], still_open["revenue"], still_open["gross_margin"]) == (
        None,
        None,
        None,
    )
    assert still_open["vision_cost"] == Decimal("0.008000000000")  # its costs so far
    assert still_open["vision_cache_savings"] == Decimal("0.016000000000")
    assert still_open["degradation_count"] == 1


def test_unpriced_usage_and_waste_add_nothing_and_are_flagged(ledger_query):
    unpriced = _ledger_row(ledger_query, "hand-unpriced")
    assert unpriced["total_cost"] == Decimal("0")
    assert unpriced["interruption_waste_cost"] == Decimal("0")
    assert unpriced["has_unpriced_usage"] is True
    assert (unpriced["revenue_status"], unpriced["revenue"]) == ("no_price_plan", None)
    lines = ledger_query(
        "select meter, amount, unpriced_reason from intermediate.int_usage_lines_priced "
        "where session_id = 'hand-unpriced' order by meter"
    )
    assert lines == [
        {
            "meter": "llm.cached_input_tokens",
            "amount": None,
            "unpriced_reason": "other_meter_unpriced",
        },
        {"meter": "llm.input_tokens", "amount": None, "unpriced_reason": "no_rate_in_effect"},
        {"meter": "llm.output_tokens", "amount": None, "unpriced_reason": "no_rate_in_effect"},
    ]
    (waste,) = ledger_query(
        "select waste_amount, unpriced_reason from intermediate.int_interruption_waste_priced "
        "where session_id = 'hand-unpriced'"
    )
    assert waste == {"waste_amount": None, "unpriced_reason": "output_usage_unpriced"}

    no_usage = _ledger_row(ledger_query, "hand-no-usage-waste")
    assert no_usage["has_unpriced_usage"] is True
    assert no_usage["interruption_waste_cost"] == Decimal("0")


def test_daily_and_weekly_marts_carry_the_hand_made_sessions(ledger_query):
    (day,) = ledger_query(
        "select * from marts.fct_tenant_daily_margin "
        "where tenant_id = 'tenant-06' and business_date = date '2026-11-16'"
    )
    assert (day["session_count"], day["revenue"], day["gross_margin_pct"]) == (1, None, None)
    assert day["sessions_with_unpriced_usage"] == 1
    weekly = ledger_query(
        "select tenant_id, iso_week, week_start_date, session_count "
        "from marts.fct_tenant_weekly_margin where tenant_id = 'lumen-health' order by iso_week"
    )
    daily = ledger_query(
        "select sum(session_count) as sessions from marts.fct_tenant_daily_margin "
        "where tenant_id = 'lumen-health'"
    )
    assert sum(row["session_count"] for row in weekly) == daily[0]["sessions"]
    assert {row["week_start_date"].isoweekday() for row in weekly} == {1}


def test_cost_by_phase_route_splits_llm_cost(ledger_query):
    rows = ledger_query(
        "select phase, route, llm_cost, output_cost from marts.fct_cost_by_phase_route "
        "where tenant_id = 'acme-telecom' and provider = 'deepseek' "
        "and business_date = date '2026-11-16' and phase in ('greeting', 'substantive') "
        "and route in ('small', 'large') order by phase"
    )
    assert rows, "the hand-made session's two routed calls are in the mart"
    totals = ledger_query(
        "select sum(llm_cost) as llm_cost from marts.fct_cost_by_phase_route "
        "where tenant_id = 'acme-telecom'"
    )
    ledger_totals = ledger_query(
        "select sum(llm_cost) as llm_cost from marts.fct_session_ledger "
        "where tenant_id = 'acme-telecom'"
    )
    assert totals == ledger_totals


# ---- export ----------------------------------------------------------------------------------------


def test_export_csv_keeps_every_decimal_place_and_filters(ledger_built_warehouse, tmp_path):
    settings = ledger_built_warehouse.settings
    out = tmp_path / "ledger.csv"
    rows = export_session_ledger(
        settings, out, "acme-telecom", date(2026, 11, 16), date(2026, 11, 16)
    )
    with out.open(newline="") as handle:
        exported = list(csv.DictReader(handle))
    assert rows == len(exported) > 0
    assert {row["tenant_id"] for row in exported} == {"acme-telecom"}
    assert {row["business_date"] for row in exported} == {"2026-11-16"}
    hand = next(row for row in exported if row["session_id"] == "hand-price-change")
    assert hand["total_cost"] == "0.066660000000"
    assert hand["gross_margin_pct"] == "94.445000"


def test_export_parquet_writes_decimal_columns(ledger_built_warehouse, tmp_path):
    out = tmp_path / "ledger.parquet"
    rows = export_session_ledger(ledger_built_warehouse.settings, out, None, None, None)
    table = pq.read_table(out)
    assert table.num_rows == rows
    assert str(table.schema.field("total_cost").type) == "decimal128(38, 12)"
    assert str(table.schema.field("revenue").type) == "decimal128(38, 12)"


def test_export_refuses_an_unknown_suffix(ledger_built_warehouse, tmp_path):
    with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
        export_session_ledger(ledger_built_warehouse.settings, tmp_path / "x.xlsx")


# ---- every session re-computed by hand --------------------------------------------------------------


def test_every_session_recomputed_by_hand_matches_the_export_exactly(
    ledger_built_warehouse, tmp_path
):
    check_every_session(ledger_built_warehouse, tmp_path)


def test_half_even_unit_price_matches_reference_data():
    # The rate card's derived unit prices are what the hand pricer assumes.
    ref = load_reference(DBT_PROJECT_DIR.parent / "data" / "reference", "CNY")
    for row in ref.rate_card:
        assert row.unit_price == exact_ratio(row.price, row.per)
