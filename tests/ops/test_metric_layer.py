"""One metric layer: every figure people see comes from a mart of the published copy.

- no query of the boards, the alerts, the weekly review or the export names a schema other than
  `marts` (the published copy holds nothing else to name);
- every mart has a reader;
- for one tenant-day, the prefix cache hit rate and the gross margin % are the same number on the
  boards, in the alert figures, in the marts and (for its week) in the weekly review.
"""

from __future__ import annotations

import ast
import re
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from ledger.core.settings import REPO_ROOT, Settings

# The readers: every module whose SQL puts a figure in front of people.
READER_FILES = sorted(
    [
        *(REPO_ROOT / "dashboards").rglob("*.py"),
        *(REPO_ROOT / "ledger" / "alerts").glob("*.py"),
        *(REPO_ROOT / "ledger" / "report").glob("*.py"),
        REPO_ROOT / "ledger" / "serving" / "export.py",
    ]
)
# Consumers outside the people-facing readers that count as a mart's reader.
OTHER_CONSUMER_FILES = sorted(
    [
        *(REPO_ROOT / "ledger" / "finops").glob("*.py"),
        *(REPO_ROOT / "dagster_project").rglob("*.py"),
    ]
)
# Names a reader may qualify that are not metric tables: the readers' own state (alerts and
# review record what they sent in `ops`), the catalog, and the publication record publish writes.
NOT_METRICS = {"ops", "information_schema", "main.publication"}
# `from a.b`, `join a.b.c`: the schema is the part before the table.
QUALIFIED = re.compile(r"\b(?:from|join)\s+((?:[A-Za-z_][\w{}]*\.){1,2}[A-Za-z_{][\w{}]*)", re.I)

TENANT = "bright-bank"  # has realtime traffic: LLM-only and combined prefix rates differ
DAY = date(2026, 11, 20)
WEEK = "2026-W47"
WEEK_DAYS = (date(2026, 11, 16), date(2026, 11, 22))


def _strings(path: Path) -> list[str]:
    """Every string literal of a module but its docstrings, f-string placeholders as `{}`."""
    found = []
    tree = ast.parse(path.read_text())
    # Docstrings are prose, not SQL.
    skip = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    # The literal pieces of an f-string are read with their placeholders, not on their own.
    pieces = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
    }
    for node in ast.walk(tree):
        if id(node) in pieces or id(node) in skip:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            found.append(
                "".join(
                    part.value if isinstance(part, ast.Constant) else "{}" for part in node.values
                )
            )
    return found


def _qualified_names(path: Path) -> set[str]:
    return {m.group(1) for text in _strings(path) for m in QUALIFIED.finditer(text)}


def _marts() -> set[str]:
    return {p.stem for p in (REPO_ROOT / "dbt" / "models" / "marts").rglob("*.sql")}


def test_readers_name_no_schema_but_the_marts() -> None:
    offending = {}
    for path in READER_FILES:
        for name in _qualified_names(path):
            parts = name.split(".")
            schema = parts[-2]
            if schema == "marts" or schema in NOT_METRICS or ".".join(parts[-2:]) in NOT_METRICS:
                continue
            offending.setdefault(str(path.relative_to(REPO_ROOT)), set()).add(name)
    assert offending == {}


def test_the_scan_sees_the_readers_queries() -> None:
    # Guard against a scan that finds nothing and so passes: the boards name their marts.
    names = set().union(*(_qualified_names(p) for p in READER_FILES))
    assert {"marts.fct_session_ledger", "marts.fct_usage_lines", "marts.fct_quarantined_rows"} <= (
        names
    )


def test_every_mart_has_a_reader() -> None:
    text = "\n".join(p.read_text() for p in READER_FILES + OTHER_CONSUMER_FILES)
    unread = {mart for mart in _marts() if not re.search(rf"\b{mart}\b", text)}
    assert unread == set()


def test_the_published_copy_holds_the_marts_only(ops_settings: Settings) -> None:
    from ledger.serving.published_copy import open_published

    with open_published(ops_settings) as con:
        tables = con.execute(
            "select table_schema, table_name from information_schema.tables order by 1, 2"
        ).fetchall()
    assert {schema for schema, _ in tables} == {"main", "marts"}
    assert [name for schema, name in tables if schema == "main"] == ["publication"]
    assert {name for schema, name in tables if schema == "marts"} == _marts()
    with open_published(ops_settings) as con:
        columns = {
            name
            for (name,) in con.execute(
                "select column_name from information_schema.columns "
                "where table_name = 'fct_quarantined_rows'"
            ).fetchall()
        }
    assert "raw_text" not in columns


@pytest.fixture
def boards_on(ops_settings: Settings, monkeypatch: pytest.MonkeyPatch):
    """The boards' queries, pointed at the ops home's published copy."""
    import streamlit as st

    from dashboards.connection import current_version

    monkeypatch.setenv("LEDGER_HOME", str(ops_settings.home))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield current_version()
    st.cache_data.clear()
    st.cache_resource.clear()


def test_one_tenant_day_is_the_same_number_on_the_boards_in_the_alerts_and_the_review(
    ops_settings: Settings, boards_on
) -> None:
    from dashboards.filters import Filters
    from dashboards.kpis import PeriodKpis
    from dashboards.queries.experience import experience_totals
    from dashboards.queries.overview import period_totals
    from ledger.alerts.figures import load_tenant_days
    from ledger.report.review import write_weekly_review
    from ledger.serving.published_copy import open_published

    version = boards_on
    filters = Filters(DAY, DAY, (TENANT,))
    board_rate = float(experience_totals(version, filters).iloc[0].prefix_cache_hit_rate)
    board_margin = PeriodKpis.from_totals(period_totals(version, filters)).gross_margin_pct

    with open_published(ops_settings) as con:
        (alert_day,) = [d for d in load_tenant_days(con, DAY, DAY) if d.tenant_id == TENANT]
        mart_rate, mart_margin = con.execute(
            "select experience.prefix_cache_hit_rate, margin.gross_margin_pct "
            "from marts.fct_experience_tenant_daily as experience "
            "inner join marts.fct_tenant_daily_margin as margin using (tenant_id, business_date) "
            "where tenant_id = ? and business_date = ?",
            [TENANT, DAY],
        ).fetchone()
        (mart_week_margin,) = con.execute(
            "select gross_margin_pct from marts.fct_tenant_weekly_margin "
            "where tenant_id = ? and iso_week = ?",
            [TENANT, WEEK],
        ).fetchone()

    # LLM and realtime input tokens together, for both components' cause hints.
    assert alert_day.cache_hit_rates["llm"] == alert_day.cache_hit_rates["realtime"]
    assert round(float(alert_day.cache_hit_rates["llm"]), 12) == round(board_rate, 12)
    assert round(float(mart_rate), 12) == round(board_rate, 12)
    assert 0 < board_rate < 1
    assert alert_day.gross_margin_pct == board_margin == mart_margin
    assert isinstance(board_margin, Decimal)

    board_week = PeriodKpis.from_totals(period_totals(version, Filters(*WEEK_DAYS, (TENANT,))))
    review = write_weekly_review(ops_settings, WEEK).review
    (review_week,) = [w for w in review.tenants if w.tenant_id == TENANT]
    assert review_week.gross_margin_pct == board_week.gross_margin_pct == mart_week_margin


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_ledger_never_imports_the_orchestrator_and_alerts_never_import_the_report() -> None:
    ledger = REPO_ROOT / "ledger"
    # `ledger.commands` sits above the orchestrator and the boards (it runs the build job); every
    # other room of the ledger sits below them.
    orchestrated = {
        str(p.relative_to(REPO_ROOT))
        for p in ledger.rglob("*.py")
        if p.parent.name != "commands"
        and any(name.split(".")[0] == "dagster_project" for name in _imports(p))
    }
    assert orchestrated == set()
    alerts_on_report = {
        str(p.relative_to(REPO_ROOT))
        for p in (ledger / "alerts").glob("*.py")
        if any(name.startswith("ledger.report") for name in _imports(p))
    }
    assert alerts_on_report == set()
