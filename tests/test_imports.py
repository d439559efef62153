"""One way to import a test helper: `from tests.support.<module> import ...`. No module under tests/
imports a conftest (pytest loads those itself; a fixture two files share lives in their folder's
conftest.py) or a test module (whose tests would then be collected twice or run from elsewhere)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.plugins.worker_units import WORKER_UNITS

TESTS = Path(__file__).resolve().parent
REPO_ROOT = TESTS.parent


def _forbidden(name: str) -> bool:
    """A dotted module or imported name that is a conftest or a test module (or a test in one)."""
    return any(part == "conftest" or part.startswith("test_") for part in name.split("."))


def forbidden_imports(source: str) -> list[str]:
    """The imports of `source` that name a conftest or a test module, as written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _forbidden(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if _forbidden(module):
                found.append(module)
            else:
                found += [f"{module}:{a.name}" for a in node.names if _forbidden(a.name)]
    return found


def test_the_check_finds_every_way_a_conftest_or_a_test_module_was_imported():
    source = """
from conftest import WORKER_UNITS
from tests.conftest import LedgerWarehouse
import tests.test_ingest
from tests.test_ingest import llm
from test_ledger_dbt import test_every_session as check
from tests.pipeline import test_publish
def fixture():
    from conftest import INGEST_TIME
from tests.support.homes import build_home
import duckdb
"""
    assert forbidden_imports(source) == [
        "conftest",
        "tests.conftest",
        "tests.test_ingest",
        "tests.test_ingest",
        "test_ledger_dbt",
        "tests.pipeline:test_publish",
        "conftest",
    ]


def test_no_module_under_tests_imports_a_conftest_or_a_test_module():
    offenders = {
        f"{path.relative_to(REPO_ROOT)}: {name}"
        for path in sorted(TESTS.rglob("*.py"))
        for name in forbidden_imports(path.read_text())
    }
    assert offenders == set()


def test_every_file_of_the_worker_units_exists():
    named = {path for paths in WORKER_UNITS.values() for path in paths}
    assert {path for path in named if not (REPO_ROOT / path).is_file()} == set()
