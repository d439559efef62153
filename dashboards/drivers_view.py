"""What drove the cost change, on Overview and Margin: a waterfall from the comparison period's
cost through the volume, price and mix effects to the selected period's, and the top movers.

The split is ledger/serving/drivers.py's (exact Decimal: the effects add up to the change). What is
shown is rounded to cents so that it adds up too: the change shown is the cost shown now minus the
cost shown before; the effects, and the movers' changes, are rounded half-even with the fewest
moved by a cent (largest remainder) so they add up to it (`ledger.core.numbers.round_to`).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards.comparison import Comparison
from dashboards.filters import Filters
from dashboards.formatting import money
from dashboards.presentation import COMPONENT_LABELS, Col, sessions_link, show_table
from ledger.escaping.streamlit_markdown import escape
from ledger.serving.drivers import OTHERS, UNATTRIBUTED, Driver, Mover, headline, movers

BREAKDOWNS = {
    "Tenant × component × model": ("tenant_id", "component", "provider", "model"),
    "Tenant": ("tenant_id",),
    "Component": ("component",),
    "Provider": ("provider",),
    "Model": ("provider", "model"),
}
EFFECT_LABELS = {"volume": "Volume", "price": "Price", "mix": "Mix"}


def mover_name(name: tuple[str, ...], dimensions: tuple[str, ...]) -> str:
    """`bright-bank · LLM · deepseek/deepseek-chat`."""
    if name == (OTHERS,):
        return OTHERS
    values = dict(zip(dimensions, name, strict=True))
    parts = []
    for dimension in dimensions:
        value = values[dimension]
        if dimension == "component":
            value = "Unattributed" if value == UNATTRIBUTED else COMPONENT_LABELS.get(value, value)
        if dimension == "model" and "provider" in values:
            parts[-1] = f"{parts[-1]}/{value}" if value else parts[-1]
            continue
        parts.append(value or "—")
    return " · ".join(parts)


def movers_frame(drivers: list[Driver], dimensions: tuple[str, ...]) -> pd.DataFrame:
    """The top movers (ledger.serving.drivers.movers) as a table's rows."""
    return pd.DataFrame.from_records(
        [
            {
                "tenant_id": dict(zip(dimensions, m.name, strict=False)).get("tenant_id"),
                "mover": mover_name(m.name, dimensions),
                "before": m.before,
                "now": m.now,
                "change": m.change,
                "volume": m.volume,
                "price": m.price,
                "mix": m.mix,
            }
            for m in movers(drivers, dimensions)
        ]
    )


def waterfall(shown: Mover, comparison: Comparison, currency: str) -> go.Figure:
    labels = ["Before", *EFFECT_LABELS.values(), "Now"]
    values = [shown.before, shown.volume, shown.price, shown.mix, shown.now]
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
    whole = headline(drivers)
    left, right = st.columns([1, 2])
    with left:
        st.plotly_chart(waterfall(whole, comparison, currency), key=f"{key}_waterfall")
    with right:
        label = st.radio("Top movers by", list(BREAKDOWNS), horizontal=True, key=f"{key}_movers_by")
        dimensions = BREAKDOWNS[label]
        rows = movers_frame(drivers, dimensions)
        rows["sessions"] = [
            sessions_link(
                filters.date_from,
                filters.date_to,
                tenants=(tenant,) if isinstance(tenant, str) and tenant != OTHERS else (),
                scenarios=filters.scenarios,
                pipelines=filters.pipelines,
                sort="cost",
            )
            for tenant in rows["tenant_id"]
        ]
        top = rows.iloc[0]
        st.markdown(
            f"Top mover: **{escape(top['mover'])}** {top['change']:+,.2f} {currency} (volume "
            f"{top['volume']:+,.2f}, price {top['price']:+,.2f}, mix {top['mix']:+,.2f}) · "
            f"[Open its sessions]({top['sessions']})"
        )
        show_table(
            rows,
            [
                Col("sessions", "Drill down", "link", display="Sessions", width="small"),
                Col("mover", "Mover", width="medium"),
                Col("change", comparison.column("Change"), "money"),
                Col("volume", "Volume", "money", "Billable minutes' change"),
                Col("price", "Price", "money", "Rate-card unit prices' change"),
                Col("mix", "Mix", "money", "Usage per minute, model mix, caches"),
                Col("before", "Before", "money"),
                Col("now", "Now", "money"),
            ],
            currency,
            key=f"{key}_movers",
            pinned=2,
        )
    st.caption(
        f"Cost {money(whole.before, currency)} → {money(whole.now, currency)}: "
        f"{whole.change:+,.2f} = volume {whole.volume:+,.2f} + price "
        f"{whole.price:+,.2f} + mix {whole.mix:+,.2f}. Volume: the change of billable "
        "minutes at the earlier usage and prices; price: the rate-card unit prices' change on "
        "today's quantities; mix: the rest (usage per minute, model mix, cache hits, new and "
        "gone tenants or models). Rounded so every row and the parts add up to the change shown."
    )
