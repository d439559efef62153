"""From an alert to its cause in three clicks (issue 27, "Done means"): a real alert run on the ops
warehouse (bright-bank's LLM prefix cache breaks on 2026-11-20), its notification's link followed
in headless Chromium to the boards filtered to the tenant and the day, the anomaly marked on the
trend, the top mover opened and a session behind it shown."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from ledger.alerts.delivery import FileSink
from ledger.alerts.run import run_alerts
from ledger.core.settings import Settings
from ledger.core.vocabulary import COMPONENT_LABELS
from ledger.pipeline.publish import publish_records
from ledger.serving.drivers import cells_sql, decompose, movers
from ledger.serving.published_copy import open_published
from tests.support.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    TIMEOUT_MS,
    free_port,
    page_faults,
    page_metrics,
    serving,
)

DAY = date(2026, 11, 20)


@pytest.mark.browser
def test_an_alerts_link_leads_to_the_filtered_boards_the_anomaly_its_top_mover_and_a_session(
    ops_settings: Settings, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make chromium` (or `make test`)")
    port = free_port()
    settings = ops_settings.model_copy(update={"boards_url": f"http://127.0.0.1:{port}"})
    sink = FileSink(tmp_path / "notifications.jsonl", echo=None)
    run_alerts(settings, DAY, now=datetime(2026, 11, 22, 6), sink=sink, echo=None)
    publish_records(settings)
    with open_published(settings) as con:
        (sessions,) = con.execute(
            "select count(*) from marts.fct_session_ledger "
            "where tenant_id = 'bright-bank' and business_date = ? and not is_replay",
            [DAY],
        ).fetchone()
        # The day's cost change against the day before, split by tenant x component x model:
        # the row that moved most, as the page should name it.
        rows = con.execute(
            cells_sql("business_date between ? and ? and tenant_id = 'bright-bank' "
                      "and not is_replay"),
            [DAY, DAY, DAY - timedelta(days=1), DAY],
        ).fetchall()  # fmt: skip
    first = movers(decompose(rows), ("tenant_id", "component", "provider", "model"))[0]
    tenant, component, provider, model = first.name
    top = f"{tenant} · {COMPONENT_LABELS[component]} · {provider}/{model} {first.change:+,.2f} CNY"
    (message,) = [json.loads(line) for line in sink.path.read_text().splitlines()]
    link = message["text"].rsplit(" ", 1)[1]
    # The Overview is the boards' default page, served at the root (issue 40 point 1).
    assert link == f"http://127.0.0.1:{port}/?from=2026-11-20&tenant=bright-bank&to=2026-11-20"

    with serving(settings, tmp_path / "streamlit.log", port=port), sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1400})
            page.set_default_timeout(TIMEOUT_MS)

            # 1. The link: the overview of bright-bank on 2026-11-20, drawn by hour.
            page.goto(link, wait_until="domcontentloaded")
            page.get_by_text("Revenue, cost and margin per hour").wait_for()
            shown = page_metrics(page, "Revenue", "Cost", "Sessions")
            assert shown["Sessions"] == f"{sessions:,}"
            # What a person sees first: the page, not a "Page not found" dialog over it.
            assert page_faults(page) == []
            # Waited for, not asked once: the caption may draw after the figures.
            page.get_by_text(
                "2026-11-20 to 2026-11-20 (1 days) · tenants: bright-bank"
            ).first.wait_for()
            # 2. The anomaly, marked on the trend (Plotly's annotation, SVG text).
            page.get_by_text("⚠ Anomaly bright-bank: LLM cost").first.wait_for()
            # 3. What drove the cost change against the day before: the top mover, opened.
            page.get_by_text("What drove the cost change").wait_for()
            mover = page.get_by_text("Top mover:").first
            mover.wait_for()
            assert mover.inner_text().startswith(f"Top mover: {top}")
            href = mover.get_by_role("link", name="Open its sessions").get_attribute("href")
            assert href == "sessions?from=2026-11-20&sort=cost&tenant=bright-bank&to=2026-11-20"
            page.goto(f"http://127.0.0.1:{port}/{href}", wait_until="domcontentloaded")
            # 4. A session behind it: the explorer on the same tenant and day, costliest first,
            # names the session it shows.
            page.get_by_text("Showing session ").first.wait_for()
            caption = page.get_by_text("Showing session ").first.inner_text()
            assert caption.endswith(": row 1 of this page.")
            session = caption.removeprefix("Showing session ").split(":")[0]
            page.get_by_text(f"Session {session}", exact=True).wait_for()
            # Its line: tenant · scenario · pipeline · channel · started ... (a bright-bank one).
            page.get_by_text(re.compile(r"^bright-bank · .* · started 2026-11-")).first.wait_for()
            assert page_faults(page) == []
            page.screenshot(path=str(tmp_path / "session.png"), full_page=True)
        finally:
            browser.close()


def test_the_anomaly_inbox_lists_the_periods_anomalies_with_cause_status_and_link(
    ops_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ledger.core.settings import REPO_ROOT

    sink = FileSink(tmp_path / "notifications.jsonl", echo=None)
    run_alerts(ops_settings, DAY, now=datetime(2026, 11, 22, 6), sink=sink, echo=None)
    publish_records(ops_settings)
    monkeypatch.setenv("LEDGER_HOME", str(ops_settings.home))
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(REPO_ROOT / "dashboards" / "app.py"), default_timeout=60)
    at.query_params["from"] = "2026-11-16"
    at.query_params["to"] = "2026-11-22"
    at.run()
    at.switch_page("app_pages/anomalies.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (table,) = [d.value for d in at.dataframe]
    rows = [tuple(r) for r in table[["Day", "Tenant", "Severity", "Metric", "Status"]].values]
    assert [(str(r[0]), *r[1:]) for r in rows] == [
        ("2026-11-20", "bright-bank", "critical", "LLM cost", "open"),
    ]
    assert list(table["Open"]) == ["./?from=2026-11-20&tenant=bright-bank&to=2026-11-20"]
    assert table["Likely cause"][0].startswith("llm (100.0% of the change); deepseek/deepseek-chat")
    assert table["Value"][0] == "0.94 CNY against a usual 0.38 (+0.56, +145.0%)"
    with open_published(ops_settings) as con:
        (unpaged,) = con.execute(
            "select count(*) from marts.alert_anomalies where severity = 'info'"
        ).fetchone()
    shown = {m.label: m.value for m in at.metric}
    assert (shown["Open"], shown["Not paged"]) == ("1", f"{unpaged:,}")
    # The info-level findings, below paging, on request.
    at.toggle(key="anomalies_all").set_value(True).run()
    (table,) = [d.value for d in at.dataframe]
    assert list(table["Status"]).count("not paged") == unpaged
    st.cache_data.clear()
    st.cache_resource.clear()
