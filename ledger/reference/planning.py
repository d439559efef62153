"""`planning.yaml`: capacity planning settings (SPEC 11) -> table `reference.planning_settings`.

    vision_embedding_cache:
      hot_set_images: 20000       # images worth keeping embedded
      embedding_dimensions: 4096  # the encoder's hidden size
      bytes_per_value: 2          # 2 for fp16/bf16

Validated like latency_budgets.yaml (each problem names the file, the line and the rule). A
reference folder without the file uses the defaults above, so folders made before it stay valid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import duckdb
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ledger.reference.errors import Problem, ReferenceDataError
from ledger.reference.latency import _Reader, _report_validation

PLANNING_FILE = "planning.yaml"


class VisionEmbeddingCache(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hot_set_images: int = Field(default=20_000, gt=0, strict=True)
    embedding_dimensions: int = Field(default=4096, gt=0, strict=True)
    bytes_per_value: Literal[1, 2, 4] = 2


class PlanningSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    vision_embedding_cache: VisionEmbeddingCache = VisionEmbeddingCache()


def load_planning(reference_dir: Path) -> PlanningSettings:
    """The settings of `reference_dir/planning.yaml` (defaults when there is no such file)."""
    path = reference_dir / PLANNING_FILE
    if not path.exists():
        return PlanningSettings()
    reader = _Reader(PLANNING_FILE)
    loader = yaml.SafeLoader(path.read_bytes().decode("utf-8-sig", errors="replace"))
    try:
        node = loader.get_single_node()
        document = {} if node is None else reader.to_python(loader, node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = Problem(PLANNING_FILE, line, "bad_yaml", f"not valid YAML: {exc.problem}")
        raise ReferenceDataError(reference_dir, [problem]) from exc
    finally:
        loader.dispose()
    if not reader.problems and not isinstance(document, dict):
        reader.problem((), "bad_yaml", "the file must be a mapping (vision_embedding_cache: ...)")
    if not reader.problems:
        try:
            return PlanningSettings.model_validate(document)
        except ValidationError as exc:
            _report_validation(reader, exc)
    raise ReferenceDataError(reference_dir, reader.problems)


def write_planning_table(con: duckdb.DuckDBPyConnection, settings: PlanningSettings) -> None:
    """One row, replaced whole in one transaction."""
    cache = settings.vision_embedding_cache
    con.execute("begin")
    try:
        con.execute("create schema if not exists reference")
        con.execute(
            "create or replace table reference.planning_settings ("
            "hot_set_images bigint, embedding_dimensions bigint, bytes_per_value integer)"
        )
        con.execute(
            "insert into reference.planning_settings values (?, ?, ?)",
            [cache.hot_set_images, cache.embedding_dimensions, cache.bytes_per_value],
        )
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
