"""Every board page on traffic whose tenant and model names are hostile text (issue 41 points 1
and 2): what a page renders as Markdown holds no link, image, HTML, autolink or Streamlit directive
from the data, and the names are shown, escaped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ledger.core.settings import REPO_ROOT, Settings
from ledger.escaping import streamlit_markdown
from ledger.serving.links import PAGE_PATHS, board_link
from tests.support.browser import chromium_page, page_faults, serving, wait_until_drawn
from tests.support.hostile_text import MARKDOWN_LINKS, SLACK_CONTROLS, live_markdown

APP = REPO_ROOT / "dashboards" / "app.py"
TENANTS = [MARKDOWN_LINKS, SLACK_CONTROLS]


@pytest.fixture
def hostile_env(hostile_boards_home: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("LEDGER_HOME", str(hostile_boards_home.home))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(hostile_boards_home.reference_dir))
    return hostile_boards_home


def rendered_markdown(at: AppTest) -> list[str]:
    """Every text the page hands Streamlit's Markdown renderer."""
    elements = (
        at.markdown, at.caption, at.title, at.header, at.subheader,
        at.info, at.warning, at.error, at.success,
    )  # fmt: skip
    texts = [element.value for group in elements for element in group]
    return texts + [metric.label for metric in at.metric]


def test_no_board_page_renders_hostile_names_as_markup(hostile_env: Settings) -> None:
    live: dict[str, list[str]] = {}
    shown: dict[str, str] = {}
    for page in PAGE_PATHS:
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.query_params["from"], at.query_params["to"] = "2025-03-10", "2025-03-11"
        at.query_params["tenant"] = TENANTS
        at.run()
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        texts = rendered_markdown(at)
        live[page] = [found for text in texts for found in live_markdown(text)]
        shown[page] = "\n".join(texts)
    assert live == {page: [] for page in PAGE_PATHS}
    # The names are there, as text: in every page's filter line, and in the Overview's top mover.
    tenants = (
        f"tenants: {streamlit_markdown.escape(MARKDOWN_LINKS)}, "
        f"{streamlit_markdown.escape(SLACK_CONTROLS)}"
    )
    assert [page for page in PAGE_PATHS if tenants not in shown[page]] == []
    (top,) = [line for line in shown["overview"].splitlines() if line.startswith("Top mover:")]
    names = (streamlit_markdown.escape(MARKDOWN_LINKS), streamlit_markdown.escape(SLACK_CONTROLS))
    assert top.startswith(tuple(f"Top mover: **{name} · " for name in names)), top


@pytest.mark.browser
def test_in_a_real_browser_no_page_links_or_fetches_outside_the_boards(
    hostile_boards_home: Settings, boards_chromium: Path, tmp_path: Path
) -> None:
    """Every page in headless Chromium, filtered to the hostile tenants: every request the page
    makes and every link and image it draws stays on the boards' own address."""
    outside: dict[str, list[str]] = {}
    with (
        serving(hostile_boards_home, tmp_path / "streamlit.log") as url,
        chromium_page(width=1280, height=800) as page,
    ):
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        for name in PAGE_PATHS:
            link = board_link(
                url, name, {"from": "2025-03-10", "to": "2025-03-11", "tenant": TENANTS}
            )
            page.goto(link, wait_until="domcontentloaded")
            # The filter line names the tenants as they are written: text, not a link.
            page.get_by_text(re.compile(r"tenants: \[\.\.\]\(https:")).first.wait_for()
            wait_until_drawn(page)
            drawn = page.eval_on_selector_all(
                "a[href], img[src]", "els => els.map(e => e.href || e.src)"
            )
            outside[name] = [
                address
                for address in [*requested, *drawn]
                if not address.startswith((f"{url}/", "data:", "blob:"))
            ]
            assert page_faults(page) == [], name
            requested.clear()
    assert outside == {name: [] for name in PAGE_PATHS}
