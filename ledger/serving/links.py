"""Deep links into the boards: the address an alert, a review or another page hands a reader.

A link is `LEDGER_BOARDS_URL` + a page's URL path + its filters as query parameters, the form the
boards read back (`st.query_params`), so following one reproduces the view. Parameters are sorted
and empty ones left out: the same view always has the same link.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode


@dataclass(frozen=True)
class BoardPage:
    """A page of the boards: its file `dashboards/app_pages/<name>.py` (Streamlit names its URL
    path after it), and the title and icon the navigation shows."""

    name: str
    title: str
    icon: str


# The one list of the boards' pages, in navigation order (the render bench times them in it):
# dashboards/app.py builds its navigation from it, links check their page against it, and
# tests/boards/test_page_registry.py ties it to the files of dashboards/app_pages/.
BOARD_PAGES = (
    BoardPage("overview", "Overview", ":material/dashboard:"),
    BoardPage("anomalies", "Anomaly inbox", ":material/notifications:"),
    BoardPage("margin", "Margin", ":material/payments:"),
    BoardPage("experience", "Experience", ":material/timer:"),
    BoardPage("combined", "Margin × experience", ":material/join:"),
    BoardPage("sessions", "Session explorer", ":material/search:"),
    BoardPage("data_quality", "Data quality", ":material/rule:"),
    BoardPage("operations", "Operations", ":material/dns:"),
    BoardPage("slo", "Latency SLOs", ":material/speed:"),  # SPEC 13
    BoardPage("budgets", "Spend budgets", ":material/savings:"),  # SPEC 13
)
PAGE_PATHS = tuple(page.name for page in BOARD_PAGES)
# The shared filters as query parameters, the names the boards read and write back
# (dashboards/filters.py): a period preset, or `from` and `to` (YYYY-MM-DD) for a custom one;
# `tenant`, `scenario` and `pipeline` repeated per value; `replays=1` to include replayed copies.
FILTER_PARAMS = ("period", "from", "to", "tenant", "scenario", "pipeline", "replays")
# The boards' default page, the first: Streamlit serves it at the root, and its file name as a
# path (`/overview`) is "Page not found" (issue 40), so a link to it names the root.
DEFAULT_PAGE = BOARD_PAGES[0].name


def page_path(page: str) -> str:
    """The URL path of a board page under the boards' base URL: the root for the default page."""
    if page not in PAGE_PATHS:
        raise ValueError(f"no board page {page!r}; the pages are {', '.join(sorted(PAGE_PATHS))}")
    return "" if page == DEFAULT_PAGE else page


def board_link(base_url: str, page: str, params: Mapping[str, object] | None = None) -> str:
    """The boards' `page` at `base_url` (Settings.boards_url) with `params` as its filters; a
    parameter with several values (a list or tuple) is repeated."""
    path = page_path(page)
    pairs: list[tuple[str, str]] = []
    for name, value in sorted((params or {}).items()):
        values = value if isinstance(value, list | tuple) else [value]
        pairs.extend((name, str(one)) for one in values if one is not None and str(one) != "")
    query = f"?{urlencode(pairs)}" if pairs else ""
    return f"{base_url.rstrip('/')}/{path}{query}"


def relative_board_link(page: str, params: Mapping[str, object] | None = None) -> str:
    """A link from one board page to another, relative so it works under any base URL:
    `sessions?from=…&tenant=…`, and `./?from=…` for the default page (an empty path would stay on
    the page the link is clicked from)."""
    link = board_link(".", page, params)
    return link if page == DEFAULT_PAGE else link.removeprefix("./")
