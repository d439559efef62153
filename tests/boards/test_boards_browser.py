"""A real browser on the real server: `streamlit run` on a free local port, headless Chromium
(Debian's package, installed by `make test` when missing) driven by Playwright, on the `boards_home` copy.

The sidebar's default period is the last complete ISO week; the fixture ledger (2025-03-09 to
2025-03-11) holds none, so it is the whole ledger, and the overview counts all three fixture
sessions: revenue 0.60 + 1.80 + 1.60 = 4.00, cost 0.0144 +
0.6838 + 0.125 = 0.8232, margin 3.1768. Latency comes from acme-s1 and kiddo-s1 only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger.core.settings import Settings
from tests.support.browser import CHROMIUM_ARGS, TIMEOUT_MS, page_metrics, screenshot, serving


@pytest.fixture
def boards_url(boards_home: Settings, tmp_path: Path) -> Iterator[str]:
    try:
        with serving(boards_home, tmp_path / "streamlit.log") as url:
            yield url
    except RuntimeError as error:
        pytest.fail(str(error))


@pytest.mark.browser
def test_a_real_browser_finds_the_figures_on_the_overview_and_the_experience_board(
    boards_url: str, boards_chromium: Path, tmp_path: Path
):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(boards_chromium), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1100})
            page.set_default_timeout(TIMEOUT_MS)

            page.goto(boards_url, wait_until="domcontentloaded")
            page.get_by_text("Cost per billable minute").wait_for()
            page.get_by_text("CNY 4.00", exact=True).wait_for()
            shown = page_metrics(page, "Revenue", "Cost", "Gross margin", "Sessions")
            assert shown["Revenue"] == "CNY 4.00"
            assert shown["Cost"] == "CNY 0.82"
            assert shown["Gross margin"] == "CNY 3.18"
            assert shown["Sessions"] == "3"
            # Waited for, not asked once: the caption may draw after the figures.
            page.get_by_text("Published copy of ").first.wait_for()
            screenshot(page, boards_url, "overview", tmp_path)

            page.goto(f"{boards_url}/experience", wait_until="domcontentloaded")
            page.get_by_text("First audio P95").wait_for()
            page.get_by_text("847.0 ms", exact=True).wait_for()
            shown = page_metrics(
                page, "First audio P50", "First audio P95", "False interruption rate"
            )
            assert shown["First audio P50"] == "820.0 ms"
            assert shown["First audio P95"] == "847.0 ms"
            assert shown["False interruption rate"] == "100.0%"
            # The budget table is a grid drawn on a canvas: its verdict is read from the caption.
            page.get_by_text("Worst line at P95:").wait_for()
            caption = page.get_by_text("Worst line at P95:").inner_text()
            assert "LLM time to first token of customer_service (owner: inference)" in caption
            assert "+30.8% against its budget" in caption
            screenshot(page, boards_url, "experience", tmp_path)
            # The pages the docs show besides these two come up with their figures too.
            screenshot(page, boards_url, "margin", tmp_path)
            screenshot(page, boards_url, "sessions", tmp_path)
            assert sorted(p.name for p in tmp_path.glob("*.png")) == [
                "experience.png",
                "margin.png",
                "overview.png",
                "sessions.png",
            ]
        finally:
            browser.close()
