"""What drove the cost change, on Overview and Margin: a waterfall from the comparison period's
cost through the volume, price and mix effects to the selected period's, and the top movers.

The split is ledger/serving/drivers.py's (exact Decimal: the effects add up to the change). What is
shown is rounded to cents so that it adds up too: the change shown is the cost shown now minus the
cost shown before; the effects, and the movers' changes, are rounded half-even with the fewest
moved by a cent (largest remainder) so they add up to it (`ledger.core.numbers.round_to`).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards.comparison import Comparison
from dashboards.filters import Filters
from dashboards.formatting import money
from dashboards.presentation import COMPONENT_LABELS, Col, sessions_link, show_table
from ledger.core.numbers import round_money, round_to, round_to_total
from ledger.serving.drivers import UNATTRIBUTED, Driver, group, total

TOP_MOVERS = 10
# The breakdowns of the top movers: label -> the dimensions a row is.
BREAKDOWNS = {
    "Tenant × component × model": ("tenant_id", "component", "provider", "model"),
    "Tenant": ("tenant_id",),
    "Component": ("component",),
    "Provider": ("provider",),
    "Model": ("provider", "model"),
}
EFFECT_LABELS = {
    "volume": "Volume (billable minutes)",
    "price": "Price (rate card)",
    "mix": "Mix (usage per minute, models, caches)",
}


def shown(driver: Driver) -> Driver:
    """A change as people read it: before and now to the cent, the change their difference, and
    its three effects adding up to it."""
    before, now = round_money(driver.before), round_money(driver.now)
    volume, price, mix = round_to([driver.volume, driver.price, driver.mix], now - before)
    return replace(driver, before=before, now=now, volume=volume, price=price, mix=mix)


def _name(driver: Driver, dimensions: tuple[str, ...]) -> str:
    parts = []
    for dimension in dimensions:
        value = getattr(driver, dimension)
        if dimension == "component":
            value = "Unattributed" if value == UNATTRIBUTED else COMPONENT_LABELS.get(value, value)
        if dimension == "model" and "provider" in dimensions:
            parts[-1] = f"{parts[-1]}/{value}" if value else parts[-1]
            continue
        parts.append(value or "—")
    return " · ".join(parts)


def movers_frame(
    drivers: list[Driver], dimensions: tuple[str, ...], headline: Driver, top: int = TOP_MOVERS
) -> pd.DataFrame:
    """The `top` rows of `dimensions` that moved most (by the size of their exact change), then
    one "All others" row, so the changes shown add up to the headline change shown."""
    rows = sorted(group(drivers, dimensions), key=lambda d: (-abs(d.change), d.key(dimensions)))
    kept, rest = rows[:top], rows[top:]
    if rest:
        kept.append(_sum_as(rest, "All others"))
    changes = round_to([d.change for d in kept], headline.change)
    befores = round_to_total([d.before for d in kept])
    nows = round_to_total([d.now for d in kept])
    records = []
    for driver, change, before, now in zip(kept, changes, befores, nows, strict=True):
        volume, price, mix = round_to([driver.volume, driver.price, driver.mix], change)
        records.append(
            {
                "tenant_id": driver.tenant_id,
                "mover": driver.tenant_id
                if driver.tenant_id == "All others"
                else _name(driver, dimensions),
                "before": before,
                "now": now,
                "change": change,
                "volume": volume,
                "price": price,
                "mix": mix,
            }
        )
    return pd.DataFrame.from_records(records)


def _sum_as(drivers: list[Driver], name: str) -> Driver:
    whole = total(drivers)
    return Driver(name, name, name, name, *_values(whole))


def _values(driver: Driver) -> tuple[Decimal, ...]:
    return driver.before, driver.now, driver.volume, driver.price, driver.mix


def waterfall(headline: Driver, comparison: Comparison, currency: str) -> go.Figure:
    labels = ["Before", *EFFECT_LABELS.values(), "Now"]
    values = [headline.before, headline.volume, headline.price, headline.mix, headline.now]
    figure = go.Figure(
        go.Waterfall(
            x=labels,
            y=[float(v) for v in values],
            measure=["absolute", "relative", "relative", "relative", "total"],
            text=[f"{v:+,.2f}" if 0 < i < 4 else f"{v:,.2f}" for i, v in enumerate(values)],
            textposition="outside",
            connector={"line": {"color": "#9aa5b1"}},
            increasing={"marker": {"color": "#d62728"}},
            decreasing={"marker": {"color": "#2ca02c"}},
            totals={"marker": {"color": "#4e79a7"}},
        )
    )
    previous = comparison.previous
    figure.update_layout(
        yaxis_title=currency,
        height=340,
        margin={"t": 30},
        showlegend=False,
        xaxis={"ticktext": labels},
        title={
            "text": f"Cost {previous.date_from:%Y-%m-%d}–{previous.date_to:%Y-%m-%d} → "
            f"{comparison.current.date_from:%Y-%m-%d}–{comparison.current.date_to:%Y-%m-%d}",
            "font": {"size": 13},
        },
    )
    return figure


def render_drivers(
    drivers: list[Driver], comparison: Comparison, filters: Filters, currency: str, key: str
) -> None:
    """The section "What drove the cost change" of a page."""
    st.subheader("What drove the cost change")
    if comparison.coverage == "empty" or not drivers:
        st.caption(comparison.note())
        return
    headline = shown(total(drivers))
    left, right = st.columns([2, 3])
    with left:
        st.plotly_chart(waterfall(headline, comparison, currency), key=f"{key}_waterfall")
    with right:
        label = st.radio("Top movers by", list(BREAKDOWNS), horizontal=True, key=f"{key}_movers_by")
        dimensions = BREAKDOWNS[label]
        movers = movers_frame(drivers, dimensions, headline)
        movers["sessions"] = [
            sessions_link(
                filters.date_from,
                filters.date_to,
                tenants=(tenant,) if "tenant_id" in dimensions and tenant != "All others" else (),
                scenarios=filters.scenarios,
                pipelines=filters.pipelines,
                sort="cost",
            )
            for tenant in movers["tenant_id"]
        ]
        show_table(
            movers,
            [
                Col("sessions", "Drill down", "link", display="Sessions", width="small"),
                Col("mover", "Mover", width="medium"),
                Col("change", comparison.column("Change"), "money", width="small"),
                Col("volume", "Volume", "money", "Billable minutes' change", width="small"),
                Col("price", "Price", "money", "Rate-card unit prices' change", width="small"),
                Col("mix", "Mix", "money", "Usage per minute, model mix, caches", width="small"),
                Col("before", "Before", "money", width="small"),
                Col("now", "Now", "money", width="small"),
            ],
            currency,
            key=f"{key}_movers",
            pinned=2,
        )
    st.caption(
        f"Cost {money(headline.before, currency)} → {money(headline.now, currency)}: "
        f"{headline.change:+,.2f} = volume {headline.volume:+,.2f} + price "
        f"{headline.price:+,.2f} + mix {headline.mix:+,.2f}. Volume: the change of billable "
        "minutes at the earlier usage and prices; price: the rate-card unit prices' change on "
        "today's quantities; mix: the rest (usage per minute, model mix, cache hits, new and "
        "gone tenants or models). Rounded so every row and the parts add up to the change shown."
    )
