"""The boards' pages are listed once (ledger.serving.links.BOARD_PAGES): the navigation, the
links and the render bench read that list, and it names exactly the files of
dashboards/app_pages/, so a page added or renamed in one place cannot be missed in another."""

from __future__ import annotations

from pathlib import Path

from ledger.serving.links import DEFAULT_PAGE, PAGE_PATHS, page_path

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


def test_the_page_list_names_every_page_file_once():
    files = sorted(p.stem for p in (APP.parent / "app_pages").glob("*.py"))
    assert sorted(PAGE_PATHS) == files
    assert len(set(PAGE_PATHS)) == len(PAGE_PATHS)
    assert DEFAULT_PAGE == "overview" and page_path("overview") == ""
    assert [page_path(name) for name in PAGE_PATHS[1:]] == list(PAGE_PATHS[1:])
