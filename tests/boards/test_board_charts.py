"""The boards' light chart builders (dashboards/charts.py) draw what plotly.express would."""

from __future__ import annotations

import json
from datetime import date

import pandas as pd
import plotly.express as px
import plotly.io as pio
import pytest

from dashboards import charts


def spec(figure) -> dict:
    return json.loads(pio.to_json(figure, validate=False))


PERIODS = pd.DataFrame(
    {
        "period": [date(2026, 11, 2), date(2026, 11, 2), date(2026, 11, 3), date(2026, 11, 3)],
        "tenant_id": ["b-tenant", "a-tenant", "b-tenant", "a-tenant"],
        "gross_margin": [1.5, -2.25, 3.0, 4.125],
    }
)


def test_line_is_px_line() -> None:
    labels = {"gross_margin": "Gross margin (EUR)", "period": "", "tenant_id": "Tenant"}
    height = 340
    light = charts.line(
        PERIODS, x="period", y="gross_margin", color="tenant_id", labels=labels, height=height
    )
    drawn = px.line(
        PERIODS,
        x="period",
        y="gross_margin",
        color="tenant_id",
        markers=True,
        labels=labels,
        height=height,
    )
    assert spec(light) == spec(drawn)


@pytest.mark.parametrize("color", [None, "route"])
def test_bar_is_px_bar(color: str | None) -> None:
    phases = pd.DataFrame(
        {
            "phase": ["intake", "greeting", "intake", "closing"],
            "route": ["small", "small", "large", None],
            "llm_cost": [1.0, 2.5, 3.0, 0.25],
        }
    )
    labels = {"llm_cost": "LLM cost (EUR)", "phase": "Phase", "route": "Route"}
    orders = {"phase": ["greeting", "intake", "substantive", "closing", "unspecified"]}
    light = charts.bar(
        phases, x="phase", y="llm_cost", color=color, labels=labels,
        category_orders=orders, height=320,
    )  # fmt: skip
    drawn = px.bar(
        phases, x="phase", y="llm_cost", color=color, labels=labels,
        category_orders=orders, height=320,
    )  # fmt: skip
    assert spec(light) == spec(drawn)


def test_sunburst_is_px_sunburst() -> None:
    costs = pd.DataFrame(
        {
            "component": ["tts", "llm", "llm", "asr", "llm"],
            "provider": ["voicely", "deepseek", "openai", "deepgram", "deepseek"],
            "model": ["v1", "deepseek-chat", "gpt-4o", None, "deepseek-reasoner"],
            "cost": [3.0, 2.5, 1.25, 0.5, 0.75],
        }
    )
    path = ["component", "provider", "model"]
    light = charts.sunburst(costs, path=path, values="cost", height=380, title="Cost (EUR)")
    drawn = px.sunburst(costs, path=path, values="cost", height=380, title="Cost (EUR)")
    # Same nodes in the same order (sector colours follow it): 4 leaves (asr's model is empty,
    # so deepgram is its last level), 4 providers, 3 components.
    assert spec(light) == spec(drawn)
    assert len(light.data[0].ids) == 11
