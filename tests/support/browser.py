"""A real Streamlit server and Debian's headless Chromium for the board tests (tests/boards/), and
the screenshots of docs/boards.md and the README: `.venv/bin/python -m tests.support.browser HOME
docs/` (from the repository root)."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(
    settings: Settings, log_path: Path, *, port: int | None = None, cwd: Path | None = None
) -> Iterator[str]:
    """`streamlit run dashboards/app.py` (as `ledger serve` runs it) on a free local port (or
    `port`), from `cwd` (where Streamlit looks for `.streamlit/secrets.toml`)."""
    port = port or free_port()
    log = log_path.open("w")
    server = subprocess.Popen(
        streamlit_command(port, address="127.0.0.1"),
        env=boards_environment(settings),
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=cwd,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        # Until it answers or exits, however loaded the machine (the per-test timeout bounds it).
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read() == b"ok":
                        break
            except OSError:
                pass
            if server.poll() is not None:
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


# The screenshots of docs/boards.md and the README: page path -> a text that is on the page once its figures are drawn.
SCREENSHOTS = {
    "overview": ("", "What drove the cost change"),
    "anomalies": ("anomalies?period=month-to-date", "Cost anomalies"),
    "margin": ("margin", "LLM cost by phase and route"),
    "experience": ("experience", "Worst line at P95:"),
    "sessions": ("sessions", "Click a row to open the session."),
}


def screenshot(page, url: str, name: str, out_dir: Path) -> None:
    """Open one page, wait for its figures, and save `<name>.png` (the whole page)."""
    path, ready = SCREENSHOTS[name]
    page.goto(f"{url}/{path}", wait_until="domcontentloaded")
    page.get_by_text(ready).first.wait_for()
    # The charts and grids draw after the text: wait until each has (on a slow machine, seconds).
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stSkeleton\"]')"
        " && [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
        ".every(chart => chart.querySelector('.main-svg'))"
        " && [...document.querySelectorAll('[data-testid=\"stDataFrame\"]')]"
        ".every(grid => grid.querySelector('canvas'))"
    )
    page.wait_for_timeout(1_500)
    page.screenshot(path=str(out_dir / f"{name}.png"), full_page=True)


def take_readme_screenshots(home: Path, out_dir: Path) -> None:
    """The screenshots of docs/boards.md and the README of a built home, 1440 wide as the issue's browser (taller, to show more):
    `.venv/bin/python -m tests.support.browser HOME docs/`."""
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


def page_faults(page) -> list[str]:
    """What a person would see go wrong on the page: an open dialog (Streamlit's "Page not found"
    among them) or an exception box, by its text."""
    dialogs = [d.inner_text() for d in page.get_by_role("dialog").all() if d.is_visible()]
    errors = page.locator('[data-testid="stException"]').all()
    return dialogs + [e.inner_text() for e in errors if e.is_visible()]


def page_metrics(page, *labels: str) -> dict[str, str]:
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


if __name__ == "__main__":
    import sys

    take_readme_screenshots(Path(sys.argv[1]), Path(sys.argv[2]))
