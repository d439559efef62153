"""Light Plotly figures: the specification `plotly.express` would produce, without its cost.

`px.line`, `px.bar` and `px.sunburst` spend most of a board page's first render (40-160 ms a chart
on the bench home: a narwhals pass over the frame, `make_subplots`, validation of every property
set twice). The pages draw a handful of simple shapes, so these builders write the same traces and
layout directly: one trace per colour group in order of first appearance, the template's colour
way, px's hover text, axis titles from `labels`. `tests/boards/test_board_charts.py` holds each
builder to px's own output on the same frame.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

_AXES = {
    "xaxis": {"anchor": "y", "domain": [0.0, 1.0]},
    "yaxis": {"anchor": "x", "domain": [0.0, 1.0]},
}


def _colorway() -> list[str]:
    return list(pio.templates[pio.templates.default].layout.colorway)


def _label(labels: dict[str, str], column: str) -> str:
    return labels.get(column, column)


def _groups(frame: pd.DataFrame, color: str | None) -> list[tuple[object, pd.DataFrame]]:
    if color is None:
        return [(None, frame)]
    return list(frame.groupby(color, sort=False))  # px leaves rows without a colour out


def _xy_figure(
    frame: pd.DataFrame,
    *,
    kind: str,
    x: str,
    y: str,
    color: str | None,
    labels: dict[str, str],
    height: int,
    trace_extra: dict,
    layout_extra: dict,
    category_orders: dict[str, Sequence[str]] | None = None,
) -> go.Figure:
    colours = _colorway()
    axis_hover = f"{_label(labels, x)}=%{{x}}<br>{_label(labels, y)}=%{{y}}<extra></extra>"
    data = []
    for position, (group, rows) in enumerate(_groups(frame, color)):
        colour = colours[position % len(colours)]
        style = (
            {"line": {"color": colour, "dash": "solid"}, "marker": {"symbol": "circle"}}
            if kind == "line"
            else {"marker": {"color": colour, "pattern": {"shape": ""}}}
        )
        data.append(
            {
                "hovertemplate": axis_hover
                if color is None
                else f"{_label(labels, color)}={group}<br>{axis_hover}",
                "legendgroup": "" if color is None else str(group),
                **style,
                **trace_extra,
                "name": "" if color is None else str(group),
                "orientation": "v",
                "showlegend": color is not None,
                "x": rows[x].to_numpy(),
                "xaxis": "x",
                "y": rows[y].to_numpy(),
                "yaxis": "y",
                "type": "scatter" if kind == "line" else "bar",
            }
        )
    xaxis = {**_AXES["xaxis"], "title": {"text": _label(labels, x)}}
    if category_orders and x in category_orders:
        xaxis |= {"categoryorder": "array", "categoryarray": list(category_orders[x])}
    legend: dict = {"tracegroupgap": 0}
    if color is not None:
        legend = {"title": {"text": _label(labels, color)}, **legend}
    layout = {
        "xaxis": xaxis,
        "yaxis": {**_AXES["yaxis"], "title": {"text": _label(labels, y)}},
        "legend": legend,
        "margin": {"t": 60},
        **layout_extra,
        "height": height,
    }
    return go.Figure({"data": data, "layout": layout})


def line(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    color: str,
    labels: dict[str, str],
    height: int,
) -> go.Figure:
    """`px.line(frame, x=, y=, color=, markers=True, labels=, height=)`."""
    return _xy_figure(
        frame,
        kind="line",
        x=x,
        y=y,
        color=color,
        labels=labels,
        height=height,
        trace_extra={"mode": "lines+markers"},
        layout_extra={},
    )


def bar(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    labels: dict[str, str],
    height: int,
    color: str | None = None,
    category_orders: dict[str, Sequence[str]] | None = None,
) -> go.Figure:
    """`px.bar(frame, x=, y=, color=, labels=, category_orders=, height=)`."""
    return _xy_figure(
        frame,
        kind="bar",
        x=x,
        y=y,
        color=color,
        labels=labels,
        height=height,
        trace_extra={"textposition": "auto"},
        layout_extra={"barmode": "relative"},
        category_orders=category_orders,
    )


def sunburst(
    frame: pd.DataFrame, *, path: Sequence[str], values: str, height: int, title: str
) -> go.Figure:
    """`px.sunburst(frame, path=, values=, height=, title=)`: every level's sum, leaves first.

    As px: a row whose deeper levels are empty counts at its last named level (a named level
    below an empty one is refused).
    """
    levels = list(path)
    named = frame[levels].notna()
    for depth in range(1, len(levels)):
        if (named[levels[depth]] & ~named[levels[depth - 1]]).any():
            raise ValueError(f"None entries cannot have not-None children: {levels[depth - 1]}")
    ids: list[str] = []
    labels: list[str] = []
    parents: list[str] = []
    sums: list[float] = []
    amounts = frame[values].astype(float)
    for depth in range(len(levels), 0, -1):
        keys = levels[:depth]
        rows = frame[named[keys].all(axis=1)]
        if rows.empty:
            continue
        grouped = amounts[rows.index].groupby([rows[k] for k in keys], sort=False).sum()
        for key, total in grouped.items():
            parts = [str(part) for part in (key if isinstance(key, tuple) else (key,))]
            ids.append("/".join(parts))
            labels.append(parts[-1])
            parents.append("/".join(parts[:-1]))
            sums.append(float(total))
    trace = {
        "branchvalues": "total",
        "domain": {"x": [0.0, 1.0], "y": [0.0, 1.0]},
        "hovertemplate": f"labels=%{{label}}<br>{values}=%{{value}}<br>parent=%{{parent}}"
        "<br>id=%{id}<extra></extra>",
        "ids": ids,
        "labels": labels,
        "name": "",
        "parents": parents,
        "values": pd.Series(sums, dtype="float64").to_numpy(),
        "type": "sunburst",
    }
    layout = {"legend": {"tracegroupgap": 0}, "title": {"text": title}, "height": height}
    return go.Figure({"data": [trace], "layout": layout})
