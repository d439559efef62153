"""Every board page on traffic whose tenant and model names are hostile text (issue 41 points 1
and 2): what a page renders as Markdown holds no link, image, HTML, autolink or Streamlit directive
from the data, and the names are shown, escaped."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from ledger.core.settings import REPO_ROOT, Settings
from ledger.escaping import streamlit_markdown
from ledger.serving.links import PAGE_PATHS
from tests.support.hostile_text import MARKDOWN_LINKS, SLACK_CONTROLS, live_markdown

APP = REPO_ROOT / "dashboards" / "app.py"


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
        at.query_params["tenant"] = [MARKDOWN_LINKS, SLACK_CONTROLS]
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
