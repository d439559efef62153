"""What is wrong with the reference files, said so that finance can fix it without reading code.

Every problem names the file, the line (1-based, the CSV header is line 1), the rule that broke and
what to do. Loading collects every problem it can find before failing, so one edit-and-reload cycle
fixes a whole file rather than one mistake at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    rule: str
    message: str
    # The second row of a pair (overlapping windows, duplicate FX rows), so both lines are named.
    other_line: int | None = None

    @property
    def first_line(self) -> int:
        """Where the problem starts, for sorting: a file-level problem (no line) comes first."""
        return min((line for line in (self.line, self.other_line) if line is not None), default=0)

    @property
    def location(self) -> str:
        if self.line is None:
            return self.file
        if self.other_line is None:
            return f"{self.file} line {self.line}"
        first, second = sorted((self.line, self.other_line))
        return f"{self.file} lines {first} and {second}"

    def __str__(self) -> str:
        return f"{self.location} [{self.rule}]: {self.message}"


class ReferenceDataError(ValueError):
    """The reference files are invalid; `problems` lists every rule broken, in file order."""

    def __init__(self, reference_dir: Path, problems: list[Problem]) -> None:
        self.reference_dir = reference_dir
        self.problems = list(problems)
        header = (
            f"reference data in {reference_dir} is invalid ({len(self.problems)} "
            f"problem{'s' if len(self.problems) != 1 else ''}); fix the files and load again:"
        )
        super().__init__("\n".join([header, *(str(problem) for problem in self.problems)]))
