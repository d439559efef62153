"""Pool capacity planning (SPEC 11, seed 8.2): the planning settings, the capacity marts and the
weekly review's capacity sheet. The arithmetic (1-minute windows, P95, cache sizing) is pinned by
the dbt unit tests in dbt/models/*/capacity/_capacity__models.yml, run by every `dbt build`."""

from __future__ import annotations

import shutil
from pathlib import Path

import openpyxl
import pytest

from ledger.core.settings import REPO_ROOT, Settings
from ledger.reference import ReferenceDataError
from ledger.reference.planning import PlanningSettings, VisionEmbeddingCache, load_planning
from tests.support.homes import dbt_run_results

CAPACITY_UNIT_TESTS = {
    "capacity_pool_load_counts_each_minute_once",
    "capacity_pools_peak_and_p95_over_one_minute_windows",
    "capacity_weekly_trend_and_vision_cache_sizing",
    # Concurrency by pipeline: paths are the cascade sessions' (SPEC 11).
    "overlapping_sessions_make_a_step_function_of_concurrency",
    "concurrency_by_pipeline_is_its_own_step_function",
}


def test_every_capacity_unit_test_passes_in_the_build(boards_home) -> None:
    statuses = {
        unique_id.rsplit(".", 1)[-1]: status
        for unique_id, status in dbt_run_results(boards_home).items()
        if unique_id.startswith("unit_test.")
    }
    assert {name: statuses.get(name) for name in CAPACITY_UNIT_TESTS} == dict.fromkeys(
        CAPACITY_UNIT_TESTS, "pass"
    )


def test_the_shipped_planning_settings_are_the_seeds_example() -> None:
    assert load_planning(REPO_ROOT / "data" / "reference") == PlanningSettings(
        vision_embedding_cache=VisionEmbeddingCache(
            hot_set_images=20_000, embedding_dimensions=4096, bytes_per_value=2
        )
    )


def test_a_folder_without_planning_settings_uses_the_defaults(tmp_path: Path) -> None:
    assert load_planning(tmp_path) == PlanningSettings()


def test_bad_planning_settings_name_the_file_line_and_rule(tmp_path: Path) -> None:
    (tmp_path / "planning.yaml").write_text(
        "vision_embedding_cache:\n  hot_set_images: -5\n  embedding_dims: 4096\n"
        "  bytes_per_value: 3\n"
    )
    with pytest.raises(ReferenceDataError) as raised:
        load_planning(tmp_path)
    assert [str(problem) for problem in raised.value.problems] == [
        "planning.yaml line 2 [bad_value]: vision_embedding_cache.hot_set_images: "
        "Input should be greater than 0",
        "planning.yaml line 4 [bad_value]: vision_embedding_cache.bytes_per_value: "
        "Input should be 1, 2 or 4",
        "planning.yaml line 3 [unknown_key]: vision_embedding_cache.embedding_dims is not a "
        "key this file knows; remove it or fix its spelling",
    ]


def test_the_weekly_review_has_a_capacity_sheet(boards_home: Settings, tmp_path: Path) -> None:
    # The boards fixture (tests/conftest.py), ISO week 2025-W11, worked out by hand:
    # acme-telecom: 100000 + 10000 (deepseek) and 10 + 5 (acme-llm) uncached input + output tokens
    #   in the minute 2025-03-10 02:00 UTC: peak 110015 / 60 = 1833.583333 tokens/s, the only
    #   hour (P95 of hourly peaks the same); W10 had no LLM load (peak 0): no change. 1 path.
    # kiddo-toys: 50000 + 25000 tokens in 2025-03-11 03:00: 1250/s. 10 images miss the embedding
    #   cache and 4 hit it in that minute: encoder 10/60 = 0.166667/s, hit rate 4/14 = 28.57%,
    #   all images 14/60/s, 10 points of hit rate save 0.1 x 14/60 = 0.023333/s. Cache = 20000
    #   hot images x (3584 / 14 = 256 tokens per image) x 4096 dims x 2 bytes = 41943040000 bytes
    #   = 39.0625 GiB. 1 path.
    # all tenants: hourly peaks 1833.583333 and 1250: P95 = 1250 + 0.95 x 583.583333 =
    #   1804.40416635 -> 1804.404166; encoder hourly peaks 0 and 0.166667: P95 0.158334.
    #   Paths are per tenant only (peaks do not add up). The sheet keeps 15 significant digits.
    from ledger.report.review import write_weekly_review
    from ledger.warehouse import copy_warehouse

    home = tmp_path / "home"
    home.mkdir()
    copy_warehouse(boards_home.warehouse_path, home / "warehouse.duckdb")
    shutil.copytree(boards_home.published_path.parent, home / "published")
    settings = Settings(home=home, reference_dir=boards_home.reference_dir)
    result = write_weekly_review(settings, "2025-W11")
    rows = list(openpyxl.load_workbook(result.xlsx)["capacity"].iter_rows(values_only=True))
    assert rows[:4] == [
        (
            "pool load of",
            "LLM tokens/s, peak minute",
            "LLM tokens/s, P95 of hourly peaks",
            "LLM peak vs week before (%)",
            "encoder images/s, peak minute",
            "encoder images/s, P95 of hourly peaks",
            "concurrent paths, peak",
            "vision cache hit rate (%)",
            "vision cache size (GiB)",
            "encoder images/s saved per 10 points of hit rate",
        ),
        ("all tenants", 1833.583333, 1804.404166, None, 0.166667, 0.158334, None,
         28.57142857142857, 39.0625, 0.023333),
        ("acme-telecom", 1833.583333, 1833.583333, None, 0, 0, 1, None, None, 0),
        ("kiddo-toys", 1250, 1250, None, 0.166667, 0.166667, 1, 28.57142857142857, 39.0625, 0.023333),
    ]  # fmt: skip
