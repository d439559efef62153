"""The boards: Debian's headless Chromium for the tests that drive a real browser (the boards fixture
`boards_home` is in tests/conftest.py: the planning tests use it too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM


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
