"""The boards: Debian's headless Chromium for the tests that drive a real browser (the boards fixture
`boards_home` is in tests/conftest.py: the planning tests use it too)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from ledger.core.settings import Settings
from tests.support.browser import CHROMIUM
from tests.support.homes import BOARDS_LANDING, BOARDS_REFERENCE_DIR, build_home
from tests.support.hostile_text import FORMULA, MARKDOWN_LINKS, SLACK_CONTROLS

# The boards' fixture traffic under hostile names (issue 41): the tenants and the unpriced model
# renamed to text that is live Markdown, Slack control sequences and a spreadsheet formula.
HOSTILE_NAMES = {"acme-telecom": MARKDOWN_LINKS, "kiddo-toys": SLACK_CONTROLS, "x": FORMULA}


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


def _hostile_landing(landing: Path) -> None:
    events = [json.loads(line) for line in (BOARDS_LANDING / "boards-fixture.jsonl").open()]
    renamed = [
        {key: HOSTILE_NAMES.get(value, value) if key in ("tenant_id", "model") else value
         for key, value in event.items()}
        for event in events
    ]  # fmt: skip
    landing.mkdir(parents=True, exist_ok=True)
    (landing / "hostile.jsonl").write_text("".join(json.dumps(e) + "\n" for e in renamed))


@pytest.fixture(scope="session")
def hostile_boards_home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The boards' fixture traffic under HOSTILE_NAMES, built and published by the job."""
    return build_home(
        tmp_path_factory.mktemp("hostile_boards"),
        reference_dir=BOARDS_REFERENCE_DIR,
        landing_files=_hostile_landing,
        ingest_time=datetime(2026, 1, 1),
    )
