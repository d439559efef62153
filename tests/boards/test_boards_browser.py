"""A real browser on the real server: `streamlit run` on a free local port, headless Chromium
(Debian's package, installed by `make test` when missing) driven by Playwright, on the `boards_home` copy.

The sidebar's default period is the last 7 days with data (2025-03-05 to 2025-03-11), so the
overview counts all three fixture sessions: revenue 0.60 + 1.80 + 1.60 = 4.00, cost 0.0144 +
0.6838 + 0.125 = 0.8232, margin 3.1768. Latency comes from acme-s1 and kiddo-s1 only.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ledger.commands.serve import boards_environment, streamlit_command
from ledger.core.settings import Settings

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 30_000


@pytest.fixture(scope="session")
def boards_chromium() -> Path:
    """Debian's chromium, which `make test` installs when missing. Never skipped: a missing
    browser fails, naming the fix."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: run `make chromium` (or `make test`, which installs it), or "
            "`sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium`."
        )
    return CHROMIUM


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(settings: Settings, log_path: Path) -> Iterator[str]:
    """`streamlit run dashboards/app.py` (as `ledger serve` runs it) on a free local port."""
    port = _free_port()
    log = log_path.open("w")
    server = subprocess.Popen(
        streamlit_command(port, address="127.0.0.1"),
        env=boards_environment(settings),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read() == b"ok":
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not come up:\n{log_path.read_text()}")
            time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture
def boards_url(boards_home: Settings, tmp_path: Path) -> Iterator[str]:
    try:
        with serving(boards_home, tmp_path / "streamlit.log") as url:
            yield url
    except RuntimeError as error:
        pytest.fail(str(error))


# The screenshots of docs/boards.md and the README: page path -> a text that is on the page once its figures are drawn.
SCREENSHOTS = {
    "overview": ("", "Cost per billable minute"),
    "margin": ("margin", "LLM cost by phase and route"),
    "experience": ("experience", "Worst line at P95:"),
    "sessions": ("sessions", "Click a row to open the session."),
}


def screenshot(page, url: str, name: str, out_dir: Path) -> None:
    """Open one page, wait for its figures, and save `<name>.png` (the whole page)."""
    path, ready = SCREENSHOTS[name]
    page.goto(f"{url}/{path}", wait_until="domcontentloaded")
    page.get_by_text(ready).first.wait_for()
    page.wait_for_timeout(1_500)  # the charts draw after the text
    page.screenshot(path=str(out_dir / f"{name}.png"), full_page=True)


def take_readme_screenshots(home: Path, out_dir: Path) -> None:
    """The screenshots of docs/boards.md and the README of a built home, 1440 wide as the issue's browser (taller, to show more):
    `.venv/bin/python tests/test_boards_browser.py HOME docs/`."""
    from playwright.sync_api import sync_playwright

    settings = Settings.from_env({"LEDGER_HOME": str(home)})
    with serving(settings, out_dir / "streamlit.log") as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1500})
            page.set_default_timeout(TIMEOUT_MS)
            for name in SCREENSHOTS:
                screenshot(page, url, name, out_dir)
        finally:
            browser.close()
    (out_dir / "streamlit.log").unlink()


def _metrics(page, *labels: str) -> dict[str, str]:
    """The page's metrics by label, once each of `labels` is on the page (Streamlit renders a
    page's elements one after another: one figure shown does not mean the next is)."""
    for label in labels:
        page.locator('[data-testid="stMetricLabel"]').get_by_text(
            label, exact=True
        ).first.wait_for()
    shown = {}
    for metric in page.locator('[data-testid="stMetric"]').all():
        label = metric.locator('[data-testid="stMetricLabel"]').inner_text().strip()
        shown[label] = metric.locator('[data-testid="stMetricValue"]').inner_text().strip()
    return shown


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
            shown = _metrics(page, "Revenue", "Cost", "Gross margin", "Sessions")
            assert shown["Revenue"] == "CNY 4.00"
            assert shown["Cost"] == "CNY 0.82"
            assert shown["Gross margin"] == "CNY 3.18"
            assert shown["Sessions"] == "3"
            assert page.get_by_text("Published copy of ").first.is_visible()
            screenshot(page, boards_url, "overview", tmp_path)

            page.goto(f"{boards_url}/experience", wait_until="domcontentloaded")
            page.get_by_text("First audio P95").wait_for()
            page.get_by_text("847.0 ms", exact=True).wait_for()
            shown = _metrics(page, "First audio P50", "First audio P95", "False interruption rate")
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


if __name__ == "__main__":
    import sys

    take_readme_screenshots(Path(sys.argv[1]), Path(sys.argv[2]))
