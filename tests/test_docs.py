"""The documentation site (mkdocs.yml, docs/) and the README as its front door.

The site is built with the venv's own `mkdocs build --strict`, as `make docs` builds it, so a
broken link, a missing anchor or a page left out of the nav fails the suite; the README must stay
short and link every page of the site.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCS = REPO_ROOT / "docs"
README = REPO_ROOT / "README.md"
# The mkdocs of the environment running the tests (.venv/bin/mkdocs), not one found on PATH.
MKDOCS = Path(sys.executable).parent / "mkdocs"
README_MAX_LINES = 320


def _build(config_dir: Path, site_dir: Path) -> subprocess.CompletedProcess[str]:
    # NO_MKDOCS_2_WARNING: Material's end-of-life banner is not a build warning; keep it out of
    # the output a failing assertion shows.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site_dir)],
        cwd=config_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _docs_pages() -> set[str]:
    return {str(p.relative_to(REPO_ROOT)) for p in DOCS.rglob("*.md")}


def test_the_site_builds_strict_with_a_page_for_every_doc(tmp_path: Path) -> None:
    site = tmp_path / "site"
    built = _build(REPO_ROOT, site)
    assert built.returncode == 0, built.stderr
    pages = {str(p.relative_to(site)) for p in site.rglob("index.html")}
    # use_directory_urls: docs/x.md becomes x/index.html, docs/index.md the site's index.html.
    expected = {
        "index.html" if md.stem == "index" else f"{md.relative_to(DOCS).with_suffix('')}/index.html"
        for md in DOCS.rglob("*.md")
    }
    assert pages == expected
    # The screenshots the boards page shows are published with the site.
    assert {p.name for p in site.glob("*.png")} == {p.name for p in DOCS.glob("*.png")}


@pytest.mark.parametrize(
    ("appended", "warning"),
    [
        (
            "[a page](nowhere.md)",
            "Doc file 'index.md' contains a link 'nowhere.md', but the target is not found "
            "among documentation files.",
        ),
        (
            "[a heading](architecture.md#no-such-heading)",
            "Doc file 'index.md' contains a link 'architecture.md#no-such-heading', but the doc "
            "'architecture.md' does not contain an anchor '#no-such-heading'.",
        ),
        (
            "[a heading here](#no-such-heading)",
            "Doc file 'index.md' contains a link '#no-such-heading', but there is no such anchor "
            "on this page.",
        ),
        (
            "[a source file](../ledger/cli.py)",
            "Doc file 'index.md' contains a link '../ledger/cli.py', but the target is not found "
            "among documentation files.",
        ),
    ],
    ids=["missing-page", "missing-anchor", "missing-anchor-on-the-page", "outside-docs"],
)
def test_a_broken_link_fails_the_strict_build(tmp_path: Path, appended: str, warning: str) -> None:
    shutil.copy(REPO_ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    with (tmp_path / "docs" / "index.md").open("a") as index:
        index.write(f"\n{appended}\n")
    built = _build(tmp_path, tmp_path / "site")
    assert built.returncode == 1
    warnings = [line for line in built.stderr.splitlines() if line.startswith("WARNING")]
    assert warnings == [f"WARNING -  {warning}"]
    # MkDocs logs its warnings on stderr and says why it stopped on stdout.
    assert built.stdout.strip() == "Aborted with 1 warnings in strict mode!"


def test_a_page_left_out_of_the_nav_fails_the_strict_build(tmp_path: Path) -> None:
    shutil.copy(REPO_ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    (tmp_path / "docs" / "orphan.md").write_text("# Orphan\n")
    built = _build(tmp_path, tmp_path / "site")
    assert built.returncode == 1
    assert "  - orphan.md" in built.stderr.splitlines()
    assert built.stdout.strip() == "Aborted with 1 warnings in strict mode!"


def test_the_readme_links_every_docs_page_and_no_other() -> None:
    # Markdown links into docs/ (an anchor after the page is allowed); images are not pages.
    linked = set(re.findall(r"\]\((docs/[^)#\s]+\.md)(?:#[^)\s]*)?\)", README.read_text()))
    assert linked == _docs_pages()


def test_the_readme_is_a_front_door_of_at_most_320_lines() -> None:
    assert len(README.read_text().splitlines()) <= README_MAX_LINES


def test_the_docs_index_lists_every_page_of_the_site() -> None:
    linked = set(re.findall(r"\]\(([\w-]+\.md)(?:#[^)\s]*)?\)", (DOCS / "index.md").read_text()))
    assert linked == {p.name for p in DOCS.glob("*.md")} - {"index.md"}
