"""Reference data: the shipped files, every validation rule, exact unit prices, warehouse tables."""

from __future__ import annotations

import shutil
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from ledger.core.settings import REPO_ROOT
from ledger.reference import (
    METERS,
    REFERENCE_FILES,
    ReferenceData,
    ReferenceDataError,
    load_reference,
    write_reference_tables,
)

SHIPPED = REPO_ROOT / "data" / "reference"
RATE_CARD_HEADER = "provider,model,meter,price,per,currency,effective_from,effective_to"
# The shipped rate card has a header and 70 rows, so an appended row is line 72.
SHIPPED_RATE_ROWS = 70
APPENDED_RATE_LINE = SHIPPED_RATE_ROWS + 2


@pytest.fixture(scope="module")
def shipped() -> ReferenceData:
    return load_reference(SHIPPED)


@pytest.fixture
def ref_dir(tmp_path: Path) -> Path:
    """A copy of the shipped files that a test may break."""
    target = tmp_path / "reference"
    shutil.copytree(SHIPPED, target)
    return target


def set_line(path: Path, line: int, text: str | None) -> None:
    """Replace 1-based `line` of `path` with `text` (None deletes it)."""
    lines = path.read_text().splitlines()
    if text is None:
        del lines[line - 1]
    else:
        lines[line - 1] = text
    path.write_text("\n".join(lines) + "\n")


def append_line(path: Path, text: str) -> None:
    with path.open("a") as handle:
        handle.write(text + "\n")


def problems(ref_dir: Path) -> list[str]:
    with pytest.raises(ReferenceDataError) as caught:
        load_reference(ref_dir)
    return [str(problem) for problem in caught.value.problems]


# ---- the shipped files ---------------------------------------------------------------------------


def test_shipped_reference_files_load_cleanly(shipped: ReferenceData) -> None:
    assert len(shipped.rate_card) == SHIPPED_RATE_ROWS
    assert (len(shipped.provider_aliases), len(shipped.model_aliases)) == (10, 8)
    assert len(shipped.fx_rates) == 761  # every day from 2025-01-01 to 2027-01-31
    assert shipped.fx_rates[0].rate_date == date(2025, 1, 1)
    assert shipped.fx_rates[-1].rate_date == date(2027, 1, 31)
    assert [plan.tenant_id for plan in shipped.price_plans] == [
        "acme-telecom",
        "bright-bank",
        "kiddo-toys",
        "lumen-health",
        "nova-retail",
    ]
    assert len(shipped.latency_budgets) == 72  # (default + lumen-health) x 6 scenarios x 6
    assert {row.meter for row in shipped.rate_card} == set(METERS)


def test_meters_are_the_seventeen_of_the_spec() -> None:
    # the spec's fifteen, and the token meters of a token-billed TTS (contract v1.2)
    assert len(METERS) == 17
    assert METERS[5:7] == ("tts.input_tokens", "tts.output_audio_tokens")
    assert METERS[0] == "asr.audio_seconds"
    assert METERS[-1] == "infra.gb"


@pytest.mark.parametrize(
    ("provider", "model", "meter", "unit_price"),
    [
        ("aliyun", "paraformer-realtime-v2", "asr.audio_seconds", "0.00024"),
        # 0.0077 / 60 does not terminate: 20 places, half-even.
        ("deepgram", "nova-3", "asr.audio_seconds", "0.00012833333333333333"),
        ("qwen", "qwen-max", "llm.output_tokens", "0.0000096"),
        ("aliyun", "cosyvoice-v2", "tts.characters", "0.0002"),
        ("elevenlabs", "flash-v2.5", "tts.characters", "0.00005"),
        ("qwen", "qwen-vl-plus", "vision.images", "0.008"),
    ],
)
def test_unit_price_is_price_over_per_exactly(
    shipped: ReferenceData, provider: str, model: str, meter: str, unit_price: str
) -> None:
    row = shipped.rate(provider, model, meter, datetime(2026, 11, 1))
    assert row is not None
    assert row.unit_price == Decimal(unit_price)
    assert row.unit_price.as_tuple().exponent == -20


@pytest.mark.parametrize(
    ("price", "per", "unit_price"),
    [
        ("2", "3", "0.66666666666666666667"),
        # Exactly half-way at the 21st place: to the even neighbour, not up.
        ("0.000000000025", "1000000000", "0.00000000000000000002"),
        ("0.000000000035", "1000000000", "0.00000000000000000004"),
    ],
)
def test_unit_price_rounds_half_even_at_twenty_places(
    ref_dir: Path, price: str, per: str, unit_price: str
) -> None:
    append_line(ref_dir / "rate_card.csv", f"acme,x,vision.images,{price},{per},CNY,2025-01-01,")
    row = load_reference(ref_dir).rate_card[-1]
    assert row.unit_price == Decimal(unit_price)
    assert row.unit_price.as_tuple().exponent == -20


def test_price_per_second_is_price_per_minute_over_sixty(shipped: ReferenceData) -> None:
    per_second = {plan.tenant_id: plan.price_per_second for plan in shipped.price_plans}
    assert per_second == {
        "acme-telecom": Decimal("0.01"),
        "bright-bank": Decimal("0.0075"),
        "kiddo-toys": Decimal("0.015"),
        "lumen-health": Decimal("0.002"),
        "nova-retail": Decimal("0.005"),
    }


def test_deepseek_price_change_takes_effect_at_midnight_utc_on_2026_11_16(
    shipped: ReferenceData,
) -> None:
    def price(meter: str, at: datetime) -> Decimal:
        row = shipped.rate("deepseek", "deepseek-chat", meter, at)
        assert row is not None
        return row.price

    before, after = datetime(2026, 11, 15, 23, 59, 59, 999999), datetime(2026, 11, 16)
    assert price("llm.output_tokens", before) == Decimal("8.00")
    assert price("llm.output_tokens", after) == Decimal("6.00")
    assert price("llm.input_tokens", before) == Decimal("2.00")
    assert price("llm.input_tokens", after) == Decimal("1.60")
    assert price("llm.cached_input_tokens", after) == Decimal("0.50")


def test_money_is_parsed_to_decimal_without_float(shipped: ReferenceData) -> None:
    row = shipped.rate("telco", "pstn", "infra.path_minutes", datetime(2026, 1, 1))
    assert row is not None
    assert row.price == Decimal("0.03")
    assert str(row.price) == "0.03"  # the text as written, not 0.029999999999999999
    assert str(shipped.fx_rates[0].rate) == "7.1800"


def test_a_timestamp_with_offset_is_stored_as_naive_utc(ref_dir: Path) -> None:
    append_line(
        ref_dir / "rate_card.csv",
        "acme,x,vision.images,1,1,CNY,2026-11-16T00:00:00+08:00,2026-12-01T00:00:00Z",
    )
    row = load_reference(ref_dir).rate_card[-1]
    assert row.effective_from == datetime(2026, 11, 15, 16, 0)
    assert row.effective_to == datetime(2026, 12, 1)


# ---- each rule names file, line and rule ---------------------------------------------------------


def _rate(price: str = "0.01", per: str = "60", **cells: str) -> str:
    row = {
        "provider": "acme",
        "model": "asr-x",
        "meter": "asr.audio_seconds",
        "price": price,
        "per": per,
        "currency": "CNY",
        "effective_from": "2025-01-01",
        "effective_to": "",
    }
    row.update(cells)
    return ",".join(row.values())


RATE_RULES = [
    pytest.param(
        _rate(price="-0.01"),
        "[negative_price]: price must not be negative, got -0.01; enter the list amount "
        "(0 if free)",
        id="negative_price",
    ),
    pytest.param(
        _rate(per="0"),
        "[per_not_positive]: per must be greater than 0, got 0; it is how many units the price "
        "is for (1, 60, 1000, 10000 or 1000000)",
        id="per_not_positive",
    ),
    pytest.param(
        _rate(meter="llm.tokens"),
        "[unknown_meter]: meter 'llm.tokens' is not a known meter; use one of: "
        + ", ".join(METERS),
        id="unknown_meter",
    ),
    pytest.param(
        _rate(currency="usd"),
        "[bad_currency]: currency must be a 3-letter upper-case ISO 4217 code such as CNY or "
        "USD, got 'usd'",
        id="bad_currency",
    ),
    pytest.param(
        _rate(price="1.2.3"),
        "[bad_number]: price is not a number: '1.2.3'; write a plain decimal such as 0.0144 "
        "(no currency symbol, no thousands separator)",
        id="bad_number",
    ),
    pytest.param(
        _rate(price="0.0000000000001"),
        "[too_precise]: price '0.0000000000001' has more than 12 decimal places, which the "
        "ledger cannot store exactly; round it, or raise `per` (e.g. price per 1000000 instead "
        "of per 1)",
        id="too_precise",
    ),
    pytest.param(
        _rate(effective_from="2025/01/01"),
        "[bad_date]: effective_from is not a date: '2025/01/01'; write YYYY-MM-DD (meaning "
        "00:00 UTC) or an RFC 3339 timestamp with offset such as 2026-11-16T00:00:00+08:00",
        id="bad_date",
    ),
    pytest.param(
        _rate(effective_from="2025-01-01T00:00:00"),
        "[bad_date]: effective_from is not a date: '2025-01-01T00:00:00'; write YYYY-MM-DD "
        "(meaning 00:00 UTC) or an RFC 3339 timestamp with offset such as "
        "2026-11-16T00:00:00+08:00",
        id="timestamp_without_offset",
    ),
    pytest.param(
        _rate(effective_from="2025-02-01", effective_to="2025-02-01"),
        "[empty_window]: effective_to (2025-02-01 00:00:00 UTC) must be after effective_from "
        "(2025-02-01 00:00:00 UTC): the row applies from effective_from (inclusive) to "
        "effective_to (exclusive); make effective_to later, or leave it empty for no end",
        id="empty_window",
    ),
    pytest.param(
        _rate(provider=""),
        "[missing_value]: provider is empty; every row needs a provider",
        id="missing_value",
    ),
    pytest.param(
        _rate() + ",",
        "[wrong_field_count]: this row has 9 fields but the header has 8; look for a missing "
        "or extra comma (quote text that contains a comma)",
        id="wrong_field_count",
    ),
]


@pytest.mark.parametrize(("row", "expected"), RATE_RULES)
def test_a_bad_rate_card_row_is_reported_with_file_line_and_rule(
    ref_dir: Path, row: str, expected: str
) -> None:
    append_line(ref_dir / "rate_card.csv", row)
    assert problems(ref_dir) == [f"rate_card.csv line {APPENDED_RATE_LINE} {expected}"]


def test_a_missing_column_is_reported_on_the_header_line(ref_dir: Path) -> None:
    set_line(ref_dir / "rate_card.csv", 1, RATE_CARD_HEADER.replace(",per,", ","))
    assert problems(ref_dir) == [
        "rate_card.csv line 1 [missing_column]: column 'per' is missing from the header; the "
        "header must be: provider, model, meter, price, per, currency, effective_from, "
        "effective_to"
    ]


def test_an_extra_column_is_reported_on_the_header_line(ref_dir: Path) -> None:
    path = ref_dir / "price_plans.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0] + ",note", *(line + "," for line in lines[1:])]) + "\n")
    assert problems(ref_dir) == [
        "price_plans.csv line 1 [extra_column]: the header has column 'note', which is not one "
        "of this file's columns; remove it (the header must be: tenant_id, price_per_minute, "
        "per_session_fee, billing_increment_seconds, currency, effective_from, effective_to)"
    ]


def test_a_missing_file_is_named(ref_dir: Path) -> None:
    (ref_dir / "price_plans.csv").unlink()
    assert problems(ref_dir) == [
        f"price_plans.csv [missing_file]: {ref_dir / 'price_plans.csv'} does not exist; restore "
        "it from the repository (data/reference/) or point LEDGER_REFERENCE_DIR at a directory "
        "that holds all four files"
    ]


def test_overlapping_rate_windows_name_both_lines(ref_dir: Path) -> None:
    # Drop the end of the old deepseek output price (line 6): it now overlaps the new one (line 8).
    set_line(
        ref_dir / "rate_card.csv",
        6,
        "deepseek,deepseek-chat,llm.output_tokens,8.00,1000000,CNY,2025-01-01,",
    )
    assert problems(ref_dir) == [
        "rate_card.csv lines 6 and 8 [overlapping_windows]: lines 6 and 8 both apply to "
        "(deepseek, deepseek-chat, llm.output_tokens) from 2026-11-16 00:00:00 UTC "
        "([2025-01-01 00:00:00 UTC, open) overlaps [2026-11-16 00:00:00 UTC, open)); end line 6 "
        "where line 8 starts (effective_to 2026-11-16), or delete one of the rows"
    ]


def test_rate_windows_that_only_touch_do_not_overlap(ref_dir: Path) -> None:
    # The shipped price change ends the old rows exactly where the new ones start.
    append_line(ref_dir / "rate_card.csv", _rate(effective_to="2026-01-01"))
    append_line(ref_dir / "rate_card.csv", _rate(effective_from="2026-01-01"))
    assert len(load_reference(ref_dir).rate_card) == SHIPPED_RATE_ROWS + 2


def test_overlapping_price_plans_for_one_tenant_name_both_lines(ref_dir: Path) -> None:
    append_line(ref_dir / "price_plans.csv", "bright-bank,0.40,0.05,6,CNY,2026-12-01,")
    assert problems(ref_dir) == [
        "price_plans.csv lines 3 and 7 [overlapping_windows]: lines 3 and 7 both apply to "
        "tenant bright-bank from 2026-12-01 00:00:00 UTC ([2025-01-01 00:00:00 UTC, open) "
        "overlaps [2026-12-01 00:00:00 UTC, open)); end line 3 where line 7 starts "
        "(effective_to 2026-12-01), or delete one of the rows"
    ]


@pytest.mark.parametrize("increment", ["6.5", "0", "-6", ""])
def test_billing_increment_must_be_a_positive_whole_number(ref_dir: Path, increment: str) -> None:
    set_line(ref_dir / "price_plans.csv", 3, f"bright-bank,0.45,0.05,{increment},CNY,2025-01-01,")
    assert problems(ref_dir) == [
        "price_plans.csv line 3 [bad_increment]: billing_increment_seconds must be a whole "
        f"number of seconds greater than 0 (such as 1, 6 or 60), got '{increment}'"
    ]


def test_a_negative_session_fee_is_a_negative_price(ref_dir: Path) -> None:
    set_line(ref_dir / "price_plans.csv", 4, "kiddo-toys,0.90,-0.10,1,CNY,2025-01-01,")
    assert problems(ref_dir) == [
        "price_plans.csv line 4 [negative_price]: per_session_fee must not be negative, got "
        "-0.10; enter the list amount (0 if free)"
    ]


@pytest.mark.parametrize("rate", ["0", "-7.1"])
def test_an_fx_rate_must_be_positive(ref_dir: Path, rate: str) -> None:
    set_line(ref_dir / "fx_rates.csv", 2, f"2025-01-01,USD,{rate}")
    assert problems(ref_dir) == [
        f"fx_rates.csv line 2 [rate_not_positive]: rate must be greater than 0, got {rate}; it "
        "is how many units of the reporting currency 1 unit of this currency buys"
    ]


def test_a_duplicate_fx_row_names_both_lines(ref_dir: Path) -> None:
    append_line(ref_dir / "fx_rates.csv", "2025-01-01,USD,7.2000")
    assert problems(ref_dir) == [
        "fx_rates.csv lines 2 and 763 [duplicate_fx_rate]: lines 2 and 763 both give the USD "
        "rate for 2025-01-01; keep one"
    ]


def test_an_fx_date_must_be_a_calendar_date(ref_dir: Path) -> None:
    set_line(ref_dir / "fx_rates.csv", 2, "2025-02-30,USD,7.1800")
    assert problems(ref_dir) == [
        "fx_rates.csv line 2 [bad_date]: date is not a calendar date: '2025-02-30'; write "
        "YYYY-MM-DD"
    ]


def test_a_currency_in_use_without_fx_rows_is_reported_where_it_is_first_used(
    ref_dir: Path,
) -> None:
    append_line(ref_dir / "price_plans.csv", "tenant-06,0.10,0.00,1,EUR,2025-01-01,")
    assert problems(ref_dir) == [
        "price_plans.csv line 7 [missing_fx]: currency EUR is used here but fx_rates.csv has no "
        "EUR rows, so these amounts cannot be converted to CNY; add rows 'date,EUR,rate' (1 EUR "
        "= rate CNY) starting on or before the first effective_from in EUR"
    ]


def test_the_reporting_currency_needs_no_fx_rows_but_every_other_currency_does(
    ref_dir: Path,
) -> None:
    # Reporting in USD: the USD rows of fx_rates.csv now claim 1 USD = 7.18 USD, and CNY has none.
    with pytest.raises(ReferenceDataError) as caught:
        load_reference(ref_dir, reporting_currency="USD")
    rules = [(problem.file, problem.line, problem.rule) for problem in caught.value.problems]
    assert rules[0] == ("rate_card.csv", 2, "missing_fx")
    assert rules[1] == ("fx_rates.csv", 2, "reporting_currency_rate")
    assert len(rules) == 1 + 761


def test_every_problem_of_every_file_is_collected(ref_dir: Path) -> None:
    append_line(ref_dir / "rate_card.csv", _rate(price="-1"))
    append_line(ref_dir / "rate_card.csv", _rate(per="0", currency="yen"))
    set_line(ref_dir / "fx_rates.csv", 3, "2025-01-02,USD,0")
    with pytest.raises(ReferenceDataError) as caught:
        load_reference(ref_dir)
    found = [(p.file, p.line, p.rule) for p in caught.value.problems]
    assert found == [
        ("rate_card.csv", APPENDED_RATE_LINE, "negative_price"),
        ("rate_card.csv", APPENDED_RATE_LINE + 1, "per_not_positive"),
        ("rate_card.csv", APPENDED_RATE_LINE + 1, "bad_currency"),
        ("fx_rates.csv", 3, "rate_not_positive"),
    ]
    message_lines = str(caught.value).splitlines()
    assert message_lines[0] == (
        f"reference data in {ref_dir} is invalid (4 problems); fix the files and load again:"
    )
    assert message_lines[1:] == [str(problem) for problem in caught.value.problems]


# ---- latency budgets YAML ------------------------------------------------------------------------


YAML_RULES = [
    pytest.param(
        11,
        "      endpointng: {budget_ms: 250, owner: audio}",
        [
            "latency_budgets.yaml line 11 [unknown_segment]: "
            "profiles.conversational.segments.endpointng: segment 'endpointng' is not a contract "
            "segment; use one of: endpointing, stt_final, llm_ttft, tts_first_frame, "
            "network_playback",
        ],
        id="unknown_segment",
    ),
    pytest.param(
        27,
        "  outbund: conversational",
        [
            "latency_budgets.yaml line 27 [unknown_scenario]: scenarios.outbund: scenario "
            "'outbund' is not a contract scenario; use one of: customer_service, companion, "
            "hardware, outbound, other, unknown",
        ],
        id="unknown_scenario",
    ),
    pytest.param(
        21,
        "      llm_ttft: {budget_ms: 0, owner: inference}",
        [
            "latency_budgets.yaml line 21 [budget_not_positive]: "
            "profiles.embodied.segments.llm_ttft.budget_ms: budget_ms must be greater than 0 ms, "
            "got 0; a budget is the time the step may take",
        ],
        id="budget_not_positive",
    ),
    pytest.param(
        13,
        "      llm_ttft: {budget_ms: 300}",
        [
            "latency_budgets.yaml line 13 [missing_owner]: "
            "profiles.conversational.segments.llm_ttft: this segment has no owner; add "
            "`owner: <team>` (audio, inference or platform) so an overshoot reaches the team "
            "that can fix it",
        ],
        id="missing_owner",
    ),
    pytest.param(
        30,
        None,
        [
            "latency_budgets.yaml line 25 [missing_profile]: contract scenario 'hardware' has no "
            "profile; add `hardware: <profile>` under scenarios",
        ],
        id="missing_profile",
    ),
    pytest.param(
        29,
        "  companion: embodyed",
        [
            "latency_budgets.yaml line 29 [unknown_profile]: scenario 'companion' uses profile "
            "'embodyed', which is not defined under profiles (defined: conversational, embodied)",
        ],
        id="unknown_profile",
    ),
    pytest.param(
        23,
        None,
        [
            "latency_budgets.yaml line 18 [missing_segment]: profile 'embodied' has no budget for "
            "network_playback; every profile needs all five segments (endpointing, stt_final, "
            "llm_ttft, tts_first_frame, network_playback), each with budget_ms and owner",
        ],
        id="missing_segment",
    ),
    pytest.param(
        28,
        "  customer_service: embodied",
        [
            "latency_budgets.yaml line 25 [missing_profile]: contract scenario 'other' has no "
            "profile; add `other: <profile>` under scenarios",
            "latency_budgets.yaml lines 26 and 28 [duplicate_key]: 'scenarios.customer_service' "
            "is given twice; YAML would silently keep the last one, so delete the one you do not "
            "mean",
        ],
        id="duplicate_key",
    ),
    pytest.param(
        34,
        "    first_audio_msec: 450",
        [
            "latency_budgets.yaml line 34 [unknown_key]: tenants.lumen-health.first_audio_msec "
            "is not a key this file knows; remove it or fix its spelling",
        ],
        id="unknown_key",
    ),
    pytest.param(
        36,
        "      llm_ttft: {budget_ms: -200}",
        [
            "latency_budgets.yaml line 36 [budget_not_positive]: "
            "tenants.lumen-health.segments.llm_ttft.budget_ms: budget_ms must be greater than 0 "
            "ms, got -200; a budget is the time the step may take",
        ],
        id="override_budget_not_positive",
    ),
    pytest.param(
        12,
        "      stt_final: {budget_ms: 150, owner: audio",
        [
            "latency_budgets.yaml line 13 [bad_yaml]: not valid YAML: expected ',' or '}', but "
            "got ':'; check the indentation, colons and brackets on this line and the one before",
        ],
        id="bad_yaml",
    ),
]


@pytest.mark.parametrize(("line", "text", "expected"), YAML_RULES)
def test_a_bad_latency_budget_file_is_reported_with_line_and_rule(
    ref_dir: Path, line: int, text: str | None, expected: list[str]
) -> None:
    set_line(ref_dir / "latency_budgets.yaml", line, text)
    assert problems(ref_dir) == expected


# ---- warehouse tables ----------------------------------------------------------------------------


@pytest.fixture
def warehouse(tmp_path: Path, shipped: ReferenceData) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    write_reference_tables(con, shipped)
    yield con
    con.close()


def test_reference_tables_have_the_agreed_columns_and_types(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    columns = warehouse.execute(
        "select table_name, column_name, data_type from information_schema.columns "
        "where table_schema = 'reference' order by table_name, ordinal_position"
    ).fetchall()
    by_table: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in columns:
        by_table.setdefault(table, []).append((column, data_type))
    assert by_table == {
        "rate_card": [
            ("line_number", "INTEGER"),
            ("provider", "VARCHAR"),
            ("model", "VARCHAR"),
            ("meter", "VARCHAR"),
            ("price", "DECIMAL(38,12)"),
            ("per", "DECIMAL(38,12)"),
            ("currency", "VARCHAR"),
            ("effective_from", "TIMESTAMP"),
            ("effective_to", "TIMESTAMP"),
            ("unit_price", "DECIMAL(38,20)"),
        ],
        "fx_rates": [
            ("rate_date", "DATE"),
            ("currency", "VARCHAR"),
            ("rate", "DECIMAL(38,12)"),
        ],
        "price_plans": [
            ("line_number", "INTEGER"),
            ("tenant_id", "VARCHAR"),
            ("price_per_minute", "DECIMAL(38,12)"),
            ("per_session_fee", "DECIMAL(38,12)"),
            ("billing_increment_seconds", "INTEGER"),
            ("currency", "VARCHAR"),
            ("effective_from", "TIMESTAMP"),
            ("effective_to", "TIMESTAMP"),
            ("price_per_second", "DECIMAL(38,20)"),
        ],
        "latency_budgets": [
            ("scenario", "VARCHAR"),
            ("tenant_id", "VARCHAR"),
            ("segment", "VARCHAR"),
            ("budget_ms", "INTEGER"),
            ("owner", "VARCHAR"),
            ("profile", "VARCHAR"),
            ("objective", "DECIMAL(5,4)"),
        ],
        "spend_budgets": [
            ("line_number", "INTEGER"),
            ("tenant_id", "VARCHAR"),
            ("budget_month", "DATE"),
            ("amount", "DECIMAL(38,12)"),
            ("currency", "VARCHAR"),
            ("provider", "VARCHAR"),
        ],
        "provider_aliases": [
            ("line_number", "INTEGER"),
            ("seen", "VARCHAR"),
            ("provider", "VARCHAR"),
        ],
        "model_aliases": [
            ("line_number", "INTEGER"),
            ("provider", "VARCHAR"),
            ("seen", "VARCHAR"),
            ("model", "VARCHAR"),
        ],
        "meta": [
            ("reporting_currency", "VARCHAR"),
            ("loaded_at", "TIMESTAMP"),
            ("reference_dir", "VARCHAR"),
            ("content_sha256", "VARCHAR"),
        ],
    }


def test_no_reference_column_is_a_double(warehouse: duckdb.DuckDBPyConnection) -> None:
    types = warehouse.execute(
        "select 1, typeof(price), typeof(per), typeof(unit_price) from reference.rate_card "
        "union select 2, typeof(rate), null, null from reference.fx_rates "
        "union select 3, typeof(price_per_minute), typeof(per_session_fee), "
        "typeof(price_per_second) from reference.price_plans "
        "order by 1"
    ).fetchall()
    assert types == [
        (1, "DECIMAL(38,12)", "DECIMAL(38,12)", "DECIMAL(38,20)"),
        (2, "DECIMAL(38,12)", None, None),
        (3, "DECIMAL(38,12)", "DECIMAL(38,12)", "DECIMAL(38,20)"),
    ]
    doubles = warehouse.execute(
        "select count(*) from information_schema.columns where table_schema = 'reference' "
        "and data_type in ('DOUBLE', 'FLOAT', 'REAL')"
    ).fetchone()
    assert doubles == (0,)


def test_reference_tables_hold_every_row(warehouse: duckdb.DuckDBPyConnection) -> None:
    counts = warehouse.execute(
        "select (select count(*) from reference.rate_card), "
        "(select count(*) from reference.fx_rates), "
        "(select count(*) from reference.price_plans), "
        "(select count(*) from reference.latency_budgets), "
        "(select count(*) from reference.provider_aliases), "
        "(select count(*) from reference.model_aliases), "
        "(select count(*) from reference.meta)"
    ).fetchone()
    assert counts == (SHIPPED_RATE_ROWS, 761, 5, 72, 10, 8, 1)


def test_warehouse_unit_prices_are_the_exact_decimals(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    rows = warehouse.execute(
        "select line_number, price, per, unit_price, effective_to from reference.rate_card "
        "where provider in ('deepgram', 'deepseek') and model <> 'nova-2' and meter in "
        "('asr.audio_seconds', 'llm.output_tokens') order by line_number"
    ).fetchall()
    assert rows == [
        (3, Decimal("0.0077"), Decimal("60"), Decimal("0.00012833333333333333"), None),
        (6, Decimal("8.00"), Decimal("1000000"), Decimal("0.000008"), datetime(2026, 11, 16)),
        (8, Decimal("6.00"), Decimal("1000000"), Decimal("0.000006"), None),
    ]
    # 1,000,000 tokens at the unit price cost exactly the listed price, no division in SQL.
    cost = warehouse.execute(
        "select 1000000 * unit_price from reference.rate_card where line_number = 6"
    ).fetchone()
    assert cost == (Decimal("8.00"),)


def test_meta_records_currency_directory_and_content_hash(
    warehouse: duckdb.DuckDBPyConnection, shipped: ReferenceData
) -> None:
    meta = warehouse.execute(
        "select reporting_currency, reference_dir, content_sha256 from reference.meta"
    ).fetchall()
    assert meta == [("CNY", str(SHIPPED.resolve()), shipped.content_sha256)]
    assert len(shipped.content_sha256) == 64


def test_the_content_hash_changes_with_any_file(ref_dir: Path, shipped: ReferenceData) -> None:
    assert load_reference(ref_dir).content_sha256 == shipped.content_sha256
    append_line(ref_dir / "latency_budgets.yaml", "# reviewed")
    assert load_reference(ref_dir).content_sha256 != shipped.content_sha256


def test_writing_again_replaces_the_tables(
    warehouse: duckdb.DuckDBPyConnection, shipped: ReferenceData
) -> None:
    write_reference_tables(warehouse, shipped)
    assert warehouse.execute("select count(*) from reference.rate_card").fetchone() == (
        SHIPPED_RATE_ROWS,
    )
    assert warehouse.execute("select count(*) from reference.meta").fetchone() == (1,)


def test_a_failed_write_leaves_the_previous_tables(
    warehouse: duckdb.DuckDBPyConnection, shipped: ReferenceData
) -> None:
    # meta is written last; as a view it cannot be replaced by a table, so the write fails late.
    warehouse.execute("drop table reference.meta")
    warehouse.execute("create view reference.meta as select 1 as x")
    smaller = shipped.model_copy(update={"rate_card": shipped.rate_card[:1]})
    with pytest.raises(duckdb.Error):
        write_reference_tables(warehouse, smaller)
    assert warehouse.execute("select count(*) from reference.rate_card").fetchone() == (
        SHIPPED_RATE_ROWS,
    )


# ---- latency override merge ----------------------------------------------------------------------


def test_a_tenant_override_merges_over_every_scenario_default(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    rows = warehouse.execute(
        "select scenario, segment, budget_ms, owner from reference.latency_budgets "
        "where tenant_id = 'lumen-health' and scenario in ('companion', 'customer_service') "
        "order by scenario, segment"
    ).fetchall()
    assert rows == [
        ("companion", "endpointing", 150, "audio"),
        ("companion", "first_audio", 450, None),
        ("companion", "llm_ttft", 200, "inference"),
        ("companion", "network_playback", 30, "platform"),
        ("companion", "stt_final", 80, "audio"),
        ("companion", "tts_first_frame", 80, "audio"),
        ("customer_service", "endpointing", 250, "audio"),
        ("customer_service", "first_audio", 450, None),
        ("customer_service", "llm_ttft", 200, "inference"),
        ("customer_service", "network_playback", 60, "platform"),
        ("customer_service", "stt_final", 150, "audio"),
        ("customer_service", "tts_first_frame", 120, "audio"),
    ]


def test_budget_lookup_falls_back_to_the_scenario_default(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    lookup = (
        "select coalesce(t.budget_ms, d.budget_ms) from reference.latency_budgets d "
        "left join reference.latency_budgets t on t.scenario = d.scenario "
        "and t.segment = d.segment and t.tenant_id = ? "
        "where d.tenant_id is null and d.scenario = ? and d.segment = ?"
    )
    assert warehouse.execute(lookup, ["lumen-health", "companion", "llm_ttft"]).fetchone() == (200,)
    assert warehouse.execute(lookup, ["kiddo-toys", "hardware", "llm_ttft"]).fetchone() == (160,)
    assert warehouse.execute(lookup, ["acme-telecom", "unknown", "first_audio"]).fetchone() == (
        1000,
    )


def test_unknown_scenario_has_the_budgets_of_other(shipped: ReferenceData) -> None:
    def budgets(scenario: str) -> list[tuple[str | None, str, int, str | None]]:
        return [
            (row.tenant_id, row.segment, row.budget_ms, row.owner)
            for row in shipped.latency_budgets
            if row.scenario == scenario
        ]

    assert budgets("unknown") == budgets("other")
    assert shipped.latency_budget("unknown", "endpointing").budget_ms == 250


def test_python_budget_lookup_prefers_the_tenant_override(shipped: ReferenceData) -> None:
    assert shipped.latency_budget("companion", "llm_ttft", "lumen-health").budget_ms == 200
    assert shipped.latency_budget("companion", "llm_ttft", "kiddo-toys").budget_ms == 160
    assert shipped.latency_budget("companion", "first_audio").budget_ms == 500


def test_reference_files_are_the_four_of_the_spec_the_two_alias_files_and_spend_budgets() -> None:
    assert REFERENCE_FILES == (
        "rate_card.csv",
        "fx_rates.csv",
        "price_plans.csv",
        "latency_budgets.yaml",
        "provider_aliases.csv",
        "model_aliases.csv",
        "spend_budgets.csv",
    )


def test_an_empty_csv_is_missing_its_header(ref_dir: Path) -> None:
    (ref_dir / "fx_rates.csv").write_text("")
    assert problems(ref_dir) == [
        "fx_rates.csv line 1 [missing_header]: the first line must be the header: date, "
        "currency, rate"
    ]


def test_a_csv_that_is_not_utf8_is_reported_at_the_offending_line(ref_dir: Path) -> None:
    path = ref_dir / "price_plans.csv"
    path.write_bytes(
        path.read_bytes() + "caf\u00e9-bar,0.10,0.00,1,CNY,2025-01-01,\n".encode("latin-1")
    )
    assert problems(ref_dir) == [
        "price_plans.csv line 7 [bad_encoding]: the file is not UTF-8 text; save it as "
        "'CSV UTF-8' (or plain UTF-8) and load again"
    ]


def test_a_utf8_byte_order_mark_and_blank_rows_are_tolerated(ref_dir: Path) -> None:
    path = ref_dir / "price_plans.csv"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes() + b",,,,,,\n\n")
    assert len(load_reference(ref_dir).price_plans) == 5


# ---- aliases (SPEC 4) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seen_provider", "seen_model", "resolved"),
    [
        # An endpoint host (the OpenAI plugin's provider) and a dated snapshot.
        ("api.openai.com", "gpt-4o-mini-2024-07-18", ("openai", "gpt-4o-mini")),
        # A capitalised name matches the rate card's case-insensitively; Pipecat's default model.
        ("Deepgram", "nova-3-general", ("deepgram", "nova-3")),
        ("ElevenLabs", "eleven_flash_v2_5", ("elevenlabs", "flash-v2.5")),
        # LiveKit Inference: `provider/model[:voice]` under the gateway provider.
        ("livekit", "cartesia/sonic-3:a0e99841", ("cartesia", "sonic-3")),
        ("livekit", "deepgram/nova-3", ("deepgram", "nova-3")),
        ("unknown", "OpenAI/GPT-4o-mini", ("openai", "gpt-4o-mini")),
        # A slash in the model of a provider that is no gateway is its model's name.
        ("openrouter", "openai/gpt-4o-mini", ("openrouter", "openai/gpt-4o-mini")),
        # Unknown names pass through as seen.
        ("acme-llm", "X", ("acme-llm", "X")),
    ],
)
def test_seen_names_resolve_to_the_rate_cards(
    shipped: ReferenceData, seen_provider: str, seen_model: str, resolved: tuple[str, str]
) -> None:
    assert shipped.resolve_name(seen_provider, seen_model) == resolved


def test_the_alias_files_are_optional(ref_dir: Path, shipped: ReferenceData) -> None:
    (ref_dir / "provider_aliases.csv").unlink()
    (ref_dir / "model_aliases.csv").unlink()
    ref = load_reference(ref_dir)
    assert (ref.provider_aliases, ref.model_aliases) == ((), ())
    assert ref.resolve_name("api.openai.com", "gpt-4o-mini") == ("api.openai.com", "gpt-4o-mini")
    assert ref.content_sha256 != shipped.content_sha256


def test_bad_aliases_are_reported_with_file_line_and_rule(ref_dir: Path) -> None:
    append_line(ref_dir / "provider_aliases.csv", "API.OpenAI.com,openai")  # line 12
    append_line(ref_dir / "provider_aliases.csv", "my host,openai")  # line 13
    append_line(ref_dir / "provider_aliases.csv", "gw.example.com,api.deepgram.com")  # line 14
    append_line(ref_dir / "model_aliases.csv", "deepgram,Nova-3-General,nova-3")  # line 10
    append_line(ref_dir / "model_aliases.csv", "deepgram,nova-3-x,nova-3-general")  # line 11
    append_line(ref_dir / "model_aliases.csv", "api.openai.com,gpt-x,gpt-4o")  # line 12
    append_line(ref_dir / "model_aliases.csv", "openai,,gpt-4o")  # line 13
    append_line(
        ref_dir / "rate_card.csv", "OpenAI,gpt-x,llm.input_tokens,1,1000000,USD,2025-01-01,"
    )
    assert problems(ref_dir) == [
        f"rate_card.csv lines 15 and {APPENDED_RATE_LINE} [ambiguous_name]: provider OpenAI "
        "differs from line 15's openai only in case; names match case-insensitively, so spell "
        "both the same",
        "provider_aliases.csv lines 2 and 12 [duplicate_alias]: lines 2 and 12 both map "
        "API.OpenAI.com (names match case-insensitively); keep one",
        "provider_aliases.csv lines 3 and 14 [alias_chain]: api.deepgram.com is itself an alias "
        "(line 3, of deepgram); map gw.example.com to deepgram directly",
        "provider_aliases.csv line 13 [bad_name]: seen 'my host' is not a name events can "
        "carry: 1 to 128 printable ASCII characters without spaces (a host such as "
        "api.openai.com, not a URL with spaces)",
        "model_aliases.csv lines 2 and 10 [duplicate_alias]: lines 2 and 10 both map deepgram "
        "model Nova-3-General (names match case-insensitively); keep one",
        "model_aliases.csv lines 2 and 11 [alias_chain]: deepgram model nova-3-general is itself "
        "an alias (line 2, of nova-3); map nova-3-x to nova-3 directly",
        "model_aliases.csv line 12 [alias_chain]: api.openai.com is a provider alias "
        "(provider_aliases.csv line 2); name the provider it maps to, openai",
        "model_aliases.csv line 13 [missing_value]: seen is empty; every row needs a seen",
    ]
