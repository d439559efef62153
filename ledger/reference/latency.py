"""Reading `latency_budgets.yaml`: profiles, which scenario uses which, and tenant overrides.

The file's shape (`LatencyBudgetsSpec`) is validated by pydantic on the plain data; the line of
every YAML key is recorded on the way, so each problem points at the line it is about. PyYAML
silently keeps the last of two equal keys; here that is a `duplicate_key` problem instead.

    profiles:                # named budget sets
      conversational:
        first_audio_ms: 1000
        segments:
          endpointing: {budget_ms: 250, owner: audio}
          ...                # all five contract segments, each with an owner
    scenarios:               # every contract scenario -> a profile (`unknown` follows `other`)
      customer_service: conversational
    tenants:                 # optional overrides, merged over every scenario's profile
      lumen-health:
        first_audio_ms: 450
        segments:
          llm_ttft: {budget_ms: 200}   # owner inherited
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import ValidationError

from ledger.contract.events import SEGMENTS
from ledger.reference.errors import Problem
from ledger.reference.models import LatencyBudgetRow, LatencyBudgetsSpec, resolve_latency_budgets
from ledger.reference.rules import CONTRACT_SCENARIOS, VALUE_RULES

KeyPath = tuple[str, ...]


class _Reader:
    def __init__(self, file_name: str) -> None:
        self.file_name = file_name
        self.lines: dict[KeyPath, int] = {}
        self.problems: list[Problem] = []

    def line_of(self, path: KeyPath) -> int:
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return 1

    def problem(self, path: KeyPath, rule: str, message: str, other: int | None = None) -> None:
        self.problems.append(Problem(self.file_name, self.line_of(path), rule, message, other))

    def to_python(self, loader: yaml.SafeLoader, node: yaml.Node, path: KeyPath) -> Any:
        if isinstance(node, yaml.MappingNode):
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                    self.problems.append(
                        Problem(
                            self.file_name,
                            key_node.start_mark.line + 1,
                            "bad_value",
                            "keys must be plain names (no lists, maps or `<<` merges as keys)",
                        )
                    )
                    continue
                key = str(key_node.value)
                key_path = (*path, key)
                line = key_node.start_mark.line + 1
                if key in result:
                    self.problems.append(
                        Problem(
                            self.file_name,
                            line,
                            "duplicate_key",
                            f"'{'.'.join(key_path)}' is given twice; YAML would silently keep the "
                            "last one, so delete the one you do not mean",
                            self.lines[key_path],
                        )
                    )
                    continue
                self.lines[key_path] = line
                result[key] = self.to_python(loader, value_node, key_path)
            return result
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.lines[(*path, str(index))] = item.start_mark.line + 1
                items.append(self.to_python(loader, item, (*path, str(index))))
            return items
        return loader.construct_object(node, deep=True)


def load_latency_budgets(
    file_name: str, data: bytes
) -> tuple[LatencyBudgetsSpec | None, tuple[LatencyBudgetRow, ...], list[Problem]]:
    """Parse and check the YAML; rows only when there is no problem at all."""
    reader = _Reader(file_name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, (), [Problem(file_name, line, "bad_encoding", "save the file as UTF-8")]

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        document = None if node is None else reader.to_python(loader, node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        return (
            None,
            (),
            [
                Problem(
                    file_name,
                    line,
                    "bad_yaml",
                    f"not valid YAML: {exc.problem}; check the indentation, colons and brackets on "
                    "this line and the one before",
                )
            ],
        )
    finally:
        loader.dispose()
    if not isinstance(document, dict):
        reader.problem(
            (),
            "bad_yaml",
            "the file must be a mapping with the keys profiles, scenarios and (optional) tenants",
        )
        return None, (), reader.problems

    try:
        spec = LatencyBudgetsSpec.model_validate(document)
    except ValidationError as exc:
        _report_validation(reader, exc)
        return None, (), reader.problems
    _check_references(reader, spec)
    if reader.problems:
        return None, (), reader.problems
    return spec, resolve_latency_budgets(spec), []


def _report_validation(reader: _Reader, error: ValidationError) -> None:
    for item in error.errors(include_url=False):
        path = tuple(str(part) for part in item["loc"] if part != "[key]")
        where = ".".join(path) or "the file"
        rule, message = item["type"], item["msg"]
        if rule == "missing":
            rule, message = "missing_key", f"{where} is missing; add it"
        elif rule == "extra_forbidden":
            rule = "unknown_key"
            message = f"{where} is not a key this file knows; remove it or fix its spelling"
        elif rule in VALUE_RULES:
            message = f"{where}: {message}"
        else:
            rule, message = "bad_value", f"{where}: {message}"
        reader.problem(path, rule, message)


def _check_references(reader: _Reader, spec: LatencyBudgetsSpec) -> None:
    for name, profile in spec.profiles.items():
        missing = [segment for segment in SEGMENTS if segment not in profile.segments]
        if missing:
            reader.problem(
                ("profiles", name, "segments"),
                "missing_segment",
                f"profile '{name}' has no budget for {', '.join(missing)}; every profile needs "
                f"all five segments ({', '.join(SEGMENTS)}), each with budget_ms and owner",
            )
    for scenario, profile_name in spec.scenarios.items():
        if profile_name not in spec.profiles:
            reader.problem(
                ("scenarios", scenario),
                "unknown_profile",
                f"scenario '{scenario}' uses profile '{profile_name}', which is not defined under "
                f"profiles (defined: {', '.join(spec.profiles) or 'none'})",
            )
    for scenario in CONTRACT_SCENARIOS:
        if scenario not in spec.scenarios:
            reader.problem(
                ("scenarios",),
                "missing_profile",
                f"contract scenario '{scenario}' has no profile; add `{scenario}: <profile>` "
                "under scenarios",
            )
