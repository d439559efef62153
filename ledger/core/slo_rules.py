"""The multi-window burn-rate rules of the latency SLOs (SPEC 13), as settings spell them.

`LEDGER_BURN_RATE_RULES` is a space-separated list of `severity:factor:long:short`, durations as a
whole number with `m`, `h` or `d` (minutes, hours, days). The default is the SRE workbook's:

    page:14.4:1h:5m page:6:6h:30m ticket:1:3d:6h

A rule fires for an SLO when the burn rate (bad share / (1 - objective)) is above `factor` over
both its long and its short window: the long window says the burn is real, the short one that it is
still going on, so a recovered burn stops alerting within the short window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_BURN_RATE_RULES = "page:14.4:1h:5m page:6:6h:30m ticket:1:3d:6h"
SEVERITIES = ("page", "ticket")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400}
_RULE = re.compile(
    r"(?P<severity>[a-z]+):(?P<factor>\d+(\.\d+)?):(?P<long>\d+[mhd]):(?P<short>\d+[mhd])"
)


@dataclass(frozen=True)
class BurnRateRule:
    severity: str
    factor: float  # a multiple of the error budget's even spend: a ratio, not money
    long_window: str
    short_window: str

    @property
    def long_seconds(self) -> int:
        return duration_seconds(self.long_window)

    @property
    def short_seconds(self) -> int:
        return duration_seconds(self.short_window)

    @property
    def name(self) -> str:
        return f"{self.severity}_{self.long_window}_{self.short_window}"

    def as_dbt(self) -> dict[str, object]:
        return {
            "name": self.name,
            "severity": self.severity,
            "factor": self.factor,
            "long_seconds": self.long_seconds,
            "short_seconds": self.short_seconds,
        }


def duration_seconds(text: str) -> int:
    return int(text[:-1]) * _UNIT_SECONDS[text[-1]]


def parse_burn_rate_rules(text: str) -> tuple[BurnRateRule, ...]:
    """The rules of `text`; ValueError naming the first piece that is not a rule."""
    rules = []
    for piece in text.split():
        match = _RULE.fullmatch(piece)
        if match is None or match["severity"] not in SEVERITIES:
            raise ValueError(
                f"LEDGER_BURN_RATE_RULES: {piece!r} is not a rule; write severity:factor:long:short "
                f"with severity page or ticket and durations such as 5m, 6h or 3d (default: "
                f"{DEFAULT_BURN_RATE_RULES})"
            )
        rule = BurnRateRule(
            match["severity"], float(match["factor"]), match["long"], match["short"]
        )
        if rule.short_seconds >= rule.long_seconds or rule.short_seconds == 0:
            raise ValueError(
                f"LEDGER_BURN_RATE_RULES: {piece!r}: the short window must be shorter than the "
                "long one and not empty"
            )
        rules.append(rule)
    if not rules:
        raise ValueError("LEDGER_BURN_RATE_RULES names no rule; unset it for the defaults")
    return tuple(rules)
