"""Text from outside is data, never markup (issue 41): the hostile corpus (tests/support/
hostile_text.py) through each medium's escaping, every alert kind's Slack payload, the weekly
review's three documents and every CSV export."""

from __future__ import annotations

import csv
import io
import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import openpyxl
import pytest

from ledger.alerts.delivery import anomaly_message, stale_message
from ledger.alerts.detection import Anomaly, Cause
from ledger.alerts.drift import Drift, drift_message
from ledger.alerts.figures import Freshness
from ledger.alerts.slo import BurnAlert, burn_message
from ledger.alerts.spend import Crossing, spend_message
from ledger.core.settings import Settings
from ledger.escaping import html, markdown, slack, spreadsheet, streamlit_markdown
from ledger.finops.focus import CHARGES_TABLE, UNPRICED_TABLE, export_focus
from ledger.finops.spend_budgets import MonthForecast, SpendBudget
from ledger.report.documents import render_html, render_markdown, write_xlsx
from ledger.report.weekly import COUNT_FIELDS, MONEY_FIELDS, ReviewAnomaly, TenantWeek, WeeklyReview
from ledger.serving.export import export_session_ledger
from tests.support.hostile_text import (
    FORMULA,
    IDENTIFIERS,
    MARKDOWN_LINKS,
    SLACK_CONTROLS,
    TEXTS,
    formula_cells,
    live_markdown,
    live_slack,
)

WJ = "\u2060"  # the word joiner that breaks an autolink's shape
DAY = date(2026, 11, 20)
BOARDS = "https://boards.example.com"


# ---- one module per medium -----------------------------------------------------------------------


def test_each_medium_writes_the_same_hostile_text_as_literal_text() -> None:
    assert streamlit_markdown.escape(MARKDOWN_LINKS) == (
        f"\\[..\\]\\(https\\:{WJ}//evil.example/login\\)\\!\\[t\\]\\(http\\:{WJ}//x/r.png\\)"
    )
    assert markdown.escape(MARKDOWN_LINKS) == (
        f"\\[..\\]\\(https:{WJ}//evil.example/login\\)\\!\\[t\\]\\(http:{WJ}//x/r.png\\)"
    )
    assert slack.escape(SLACK_CONTROLS) == (
        f"&lt;!channel&gt;&lt;https:{WJ}//evil.example/x|Open{WJ}_billing&gt;"
    )
    assert html.escape("<img/src=x/onerror=alert(1)>") == "&lt;img/src=x/onerror=alert(1)&gt;"
    assert [spreadsheet.cell(v) for v in (FORMULA, "-2+3", "@cmd", "\tx", "\r=1", "ok-1")] == [
        "'=2+5",
        "'-2+3",
        "'@cmd",
        "'\tx",
        "'\r=1",
        "ok-1",
    ]
    # Control and direction characters are spelt out; a screen shows at most 160 characters.
    assert html.escape("gpt-4o\u202egnp.exe\x1b[0m") == "gpt-4o\\u202egnp.exe\\x1b[0m"
    assert slack.escape("A" * 10_000) == "A" * 160 + "… (9,840 more characters)"
    assert markdown.escape("#heading") == "\\#heading"
    assert markdown.escape("1.listed") == "1\\.listed"
    assert streamlit_markdown.escape(":red[alert]") == "\\:red\\[alert\\]"
    assert markdown.escape("sip:agent@pbx.example.com") == f"sip:agent@{WJ}pbx.example.com"
    # What holds nothing special is written as it is.
    for plain in ("bright-bank", "deepseek/deepseek-chat", "gpt-4o-mini", "2026-W47"):
        assert {
            streamlit_markdown.escape(plain),
            markdown.escape(plain),
            slack.escape(plain),
            html.escape(plain),
            spreadsheet.cell(plain),
        } == {plain}


@pytest.mark.parametrize("text", TEXTS)
def test_no_hostile_text_is_live_markup_once_escaped(text: str) -> None:
    assert live_markdown(f"Top mover: **{streamlit_markdown.escape(text)}** +1.00") == []
    assert live_markdown(f"| {markdown.escape(text)} | 1.00 |", streamlit=False) == []
    assert live_slack(f"*[CRITICAL] {slack.escape(text)}*") == []
    assert "<" not in html.escape(text) and ">" not in html.escape(text)
    written = io.StringIO()
    csv.writer(written).writerow([spreadsheet.cell(text), "-1.25"])
    assert formula_cells(written.getvalue()) == []


# ---- every alert kind's Slack payload ------------------------------------------------------------


def _anomaly(tenant: str, provider: str, model: str) -> Anomaly:
    cause = Cause("llm", Decimal("1"), provider, model, Decimal("0.5"), "unit_cost", model)
    return Anomaly(
        tenant, DAY, "llm_cost", "currency", Decimal("0.94"), Decimal("0.38"),
        Decimal("0.56"), Decimal("145"), Decimal("9"), "critical", 28, cause, "",
    )  # fmt: skip


def _payloads(tenant: str, provider: str, model: str) -> dict[str, dict]:
    settings = Settings(boards_url=BOARDS)
    link = f"{BOARDS}/?tenant=x"
    drift = Drift(
        DAY, provider, "llm", "CNY", Decimal("10"), Decimal("12"), Decimal("2"),
        Decimal("20"), model, Decimal("2"),
    )  # fmt: skip
    burn = BurnAlert(
        model, tenant, "llm_ttft", provider, Decimal("0.99"), model, "page", 14.4, 3600, 300,
        20.0, 21.0, datetime(2026, 11, 20, 6), 0.9, 0.1,
    )  # fmt: skip
    forecast = MonthForecast(Decimal(90), Decimal(120), Decimal(100), Decimal(130), 20, 10)
    budget = SpendBudget(tenant, provider, date(2026, 11, 1), DAY, Decimal(100), "CNY", forecast)
    freshness = Freshness(
        DAY, "Asia/Shanghai", datetime(2026, 11, 21), datetime(2026, 11, 20, 16), True, (tenant,)
    )
    return {
        "cost anomaly": anomaly_message(
            tenant, DAY, [_anomaly(tenant, provider, model)], "CNY", False, link
        ),
        "rate-card drift": drift_message(drift, False, link),
        "slo burn": burn_message(settings, burn, False),
        "spend budget": spend_message(settings, Crossing(budget, "forecast", Decimal(100))),
        "data stale": stale_message(freshness),
    }


def _texts(payload: dict) -> list[str]:
    """Every text Slack renders of a payload: the fallback, each block's and each element's."""
    texts = [payload["text"]]
    for block in payload["blocks"]:
        texts += [block["text"]["text"]] if "text" in block else []
        texts += [element["text"] for element in block.get("elements", [])]
    return texts


@pytest.mark.parametrize("name", IDENTIFIERS)
def test_every_alert_kinds_slack_payload_carries_hostile_names_as_text(name: str) -> None:
    for kind, payload in _payloads(name, name, name).items():
        # The boards' link, which ends the fallback text: ours, its parameters percent-encoded.
        url = payload["text"].rsplit(" ", 1)[-1]
        labels = ("Open in the boards", "Open the SLO", "Open the budget")
        ours = (url, *(f"<{url}|{label}>" for label in labels))
        for text in _texts(payload):
            assert live_slack(text, ours) == [], (kind, text)
            shown = text.replace(url, "")
            assert name not in shown or name == slack.escape(name), (kind, text)


def test_a_cost_anomaly_names_a_hostile_tenant_and_model_exactly_as_text() -> None:
    payload = _payloads(SLACK_CONTROLS, "deepseek", FORMULA)["cost anomaly"]
    tenant = f"&lt;!channel&gt;&lt;https:{WJ}//evil.example/x|Open{WJ}_billing&gt;"
    assert payload["text"] == (
        f"[CRITICAL] {tenant} 2026-11-20: LLM cost +145.0% {BOARDS}/?tenant=x"
    )
    assert payload["blocks"][1]["text"]["text"] == (
        "🚨 *LLM cost* 0.94 CNY against a usual 0.38 (+0.56, +145.0%), robust z 9. Likely "
        "cause: llm (100.0% of the change); deepseek/=2+5 (50.0% of that); =2+5"
    )
    assert payload["blocks"][2]["text"]["text"] == f"<{BOARDS}/?tenant=x|Open in the boards>"


# ---- the weekly review's documents ---------------------------------------------------------------


def _review(name: str) -> WeeklyReview:
    figures = {field: Decimal("1.5") for field in MONEY_FIELDS} | {
        field: Decimal(3) for field in COUNT_FIELDS
    }
    anomaly = ReviewAnomaly(
        DAY, name, "llm_cost", "currency", "critical", Decimal("0.94"), Decimal("0.38"),
        Decimal("0.56"), Decimal(145), f"llm; {name}/{name}", "sent",
    )  # fmt: skip
    return WeeklyReview(
        "2026-W47", date(2026, 11, 16), date(2026, 11, 22), "CNY", "Asia/Shanghai",
        datetime(2026, 11, 23, 6), [TenantWeek(name, figures, Decimal(10))], {}, "2026-W46", 7,
        anomalies=[anomaly],
    )  # fmt: skip


@pytest.mark.parametrize("name", TEXTS)
def test_the_reviews_documents_carry_hostile_names_as_text(name: str, tmp_path: Path) -> None:
    review = _review(name)
    written = render_markdown(review)
    assert live_markdown(written, streamlit=False) == []
    assert f"| {markdown.escape(name)} |" in written
    page = render_html(review)
    assert html.escape(name) in page
    if any(char in name for char in "<>&"):
        assert name not in page
    write_xlsx(review, tmp_path / "review.xlsx")
    workbook = openpyxl.load_workbook(tmp_path / "review.xlsx")
    tenants = [row[0] for row in workbook["margin"].iter_rows(min_row=2, values_only=True)]
    # Text cells, never formulas: the workbook keeps the name as written (the XLSX format has no
    # way to hold control characters but as its own escapes).
    assert tenants[0] == name or "\x00" in name or "\x1b" in name or "\r" in name


def test_the_reviews_markdown_escapes_a_hostile_tenant_exactly() -> None:
    written = render_markdown(_review(MARKDOWN_LINKS))
    tenant = f"\\[..\\]\\(https:{WJ}//evil.example/login\\)\\!\\[t\\]\\(http:{WJ}//x/r.png\\)"
    assert f"| 2026-11-20 | {tenant} | LLM cost | critical |" in written


# ---- every CSV export ----------------------------------------------------------------------------


def _published(tmp_path: Path, tables: dict[str, str]) -> Settings:
    """A published copy holding only the tables an export reads, each made by its SQL."""
    settings = Settings(home=tmp_path / "home")
    settings.published_path.parent.mkdir(parents=True)
    with duckdb.connect(str(settings.published_path)) as con:
        con.execute("create schema marts")
        for table, sql in tables.items():
            con.execute(f"create table {table} as {sql}")
    return settings


HOSTILE_ROWS = "select * from (values " + ", ".join(
    f"({i}, {duckdb_literal}, -1.250000000000::decimal(38, 12))"
    for i, duckdb_literal in enumerate("'" + t.replace("'", "''") + "'" for t in IDENTIFIERS)
) + ") as rows(n, name, amount)"  # fmt: skip


def test_the_session_ledger_csv_holds_no_formula_and_the_parquet_holds_the_names(
    tmp_path: Path,
) -> None:
    settings = _published(
        tmp_path,
        {
            "marts.fct_session_ledger": (
                "select name as tenant_id, name as model, n::varchar as session_id, "
                "date '2026-11-20' as business_date, timestamp '2026-11-20 01:00:00' + "
                f"n * interval 1 second as started_at, amount as total_cost from ({HOSTILE_ROWS})"
            )
        },
    )
    assert export_session_ledger(settings, tmp_path / "ledger.csv") == len(IDENTIFIERS)
    text = (tmp_path / "ledger.csv").read_text()
    assert formula_cells(text) == []
    rows = list(csv.DictReader(io.StringIO(text)))
    assert sorted(r["tenant_id"] for r in rows) == sorted(spreadsheet.cell(t) for t in IDENTIFIERS)
    assert {r["total_cost"] for r in rows} == {"-1.250000000000"}
    export_session_ledger(settings, tmp_path / "ledger.parquet")
    with duckdb.connect() as con:
        kept = con.execute(f"select tenant_id from '{tmp_path / 'ledger.parquet'}'").fetchall()
    assert sorted(t for (t,) in kept) == sorted(IDENTIFIERS)


def test_the_focus_csv_and_its_unpriced_sidecar_hold_no_formula(tmp_path: Path) -> None:
    charges = (
        "select amount as BilledCost, name as ProviderName, name as x_model, "
        "date '2026-11-20' as x_business_date, name as x_tenant_id, n::varchar as x_session_id, "
        "'llm' as x_component, name as x_provider, '{\"k\": 1}' as Tags, "
        f"timestamp '2026-11-20 00:00:00' as ChargePeriodStart from ({HOSTILE_ROWS})"
    )
    unpriced = (
        "select date '2026-11-20' as business_date, name as tenant_id, n::varchar as session_id, "
        "'llm' as component, name as provider, name as model, 'llm.input_tokens' as meter, "
        f"amount as quantity from ({HOSTILE_ROWS})"
    )
    settings = _published(tmp_path, {CHARGES_TABLE: charges, UNPRICED_TABLE: unpriced})
    out = tmp_path / "focus.csv"
    exported = export_focus(settings, out)
    assert (exported.charges, exported.unpriced_lines) == (len(IDENTIFIERS), len(IDENTIFIERS))
    for path, name, amount in (
        (out, "ProviderName", "BilledCost"),
        (exported.unpriced_path, "provider", "quantity"),
    ):
        text = path.read_text()
        assert formula_cells(text) == [], path.name
        rows = list(csv.DictReader(io.StringIO(text)))
        assert sorted(r[name] for r in rows) == sorted(spreadsheet.cell(t) for t in IDENTIFIERS)
        assert {r[amount] for r in rows} == {"-1.250000000000"}
    assert {json.loads(r["Tags"])["k"] for r in csv.DictReader(out.open())} == {1}
