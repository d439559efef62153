"""Time-series charts said one way: their time axis (days, or hours for a one-day selection) and
the anomalies the alerts found, marked on the days they happened."""

from __future__ import annotations

from datetime import datetime, time, timedelta

import pandas as pd
import plotly.graph_objects as go

from ledger.alerts.delivery import METRIC_LABELS
from ledger.escaping import html

DAY_MS = 86_400_000
SEVERITY_FILL = {"critical": "#d62728", "warning": "#ff9f1c"}


def time_axis(figure: go.Figure, *, hourly: bool, days: int) -> go.Figure:
    """A date axis that ticks whole days (never the milliseconds of one day's single point), or
    hours for a one-day selection."""
    if hourly:
        figure.update_xaxes(type="date", tickformat="%H:%M", dtick=2 * 3_600_000)
    elif days <= 14:
        figure.update_xaxes(type="date", tickformat="%b %d", dtick=DAY_MS)
    else:
        figure.update_xaxes(type="date", tickformat="%b %d")
    return figure


def anomaly_label(tenant_id: str, metric: str) -> str:
    """The anomaly's name in a Plotly annotation, whose text reads a subset of HTML (`<a href>`
    among it): the tenant is escaped as HTML."""
    return f"{html.escape(tenant_id)}: {METRIC_LABELS.get(metric, metric)}"


def mark_anomalies(figure: go.Figure, anomalies: pd.DataFrame, *, hourly: bool) -> go.Figure:
    """Shade each day with a paged anomaly (warning or critical) and name it above the plot:
    `⚠ Anomaly bright-bank: LLM cost`. Days are the bars' centres (midnight), so a day's band
    runs from noon before to noon after; on an hourly axis the day itself."""
    if anomalies.empty:
        return figure
    paged = anomalies[anomalies["severity"].isin(list(SEVERITY_FILL))]
    for day, rows in paged.groupby("business_date", sort=True):
        start = datetime.combine(day, time())
        if not hourly:
            start -= timedelta(hours=12)
        worst = "critical" if (rows["severity"] == "critical").any() else "warning"
        names = sorted(
            {anomaly_label(t, m) for t, m in zip(rows["tenant_id"], rows["metric"], strict=True)}
        )
        figure.add_vrect(
            x0=start,
            x1=start + timedelta(days=1),
            fillcolor=SEVERITY_FILL[worst],
            opacity=0.15,
            line_width=0,
            annotation_text=f"⚠ Anomaly {', '.join(names)}",
            annotation_position="top left",
            annotation_font_size=11,
        )
    return figure
