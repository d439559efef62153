"""Session explorer: find a session, read its ledger lines, turns, interruptions, caches and
degradations."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards.filters import page_context, page_header
from dashboards.formatting import money
from dashboards.presentation import Col, show_table
from dashboards.queries import sessions as queries

SEGMENT_COLOURS = {
    "endpointing": "#4c78a8",
    "stt_final": "#72b7b2",
    "llm_ttft": "#f58518",
    "tts_first_frame": "#54a24b",
    "network_playback": "#b279a2",
}


def _seconds(value: object) -> str:
    return "no end yet" if value is None or pd.isna(value) else f"{float(value):.1f} s"


context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header("Session explorer", context)

text = st.text_input(
    "Session id",
    key="sessions_search",
    placeholder="Paste a session id, or part of one",
    help="Searching by id looks at every date; without it, the list follows the sidebar.",
).strip()
found = queries.find_sessions(version, filters, text)
if found.empty:
    st.info(
        "No session matches. Check the id, or widen the dates and tenants in the sidebar."
        if text
        else "No sessions in the selected period and filters."
    )
    st.stop()

st.caption(
    f"{len(found)} sessions{' (newest 200)' if len(found) == 200 else ''}"
    + (f" whose id contains “{text}”" if text else " in the sidebar's period and filters")
    + ", newest first."
)
show_table(
    found,
    [
        Col("session_id", "Session"),
        Col("tenant_id", "Tenant"),
        Col("business_date", "Date"),
        Col("scenario", "Scenario"),
        Col("pipeline", "Pipeline"),
        Col("turn_count", "Turns", "int"),
        Col("total_cost", "Cost", "money"),
        Col("revenue", "Revenue", "money"),
        Col("gross_margin", "Gross margin", "money"),
        Col("interruption_count", "Interruptions", "int"),
        Col("degradation_count", "Degradations", "int"),
    ],
    currency,
    key="sessions_found",
    height=240,
)
session_id = st.selectbox(
    "Session to open",
    options=found["session_id"].tolist(),
    key="sessions_selected",
)
if not session_id:
    st.stop()

session = queries.session_ledger_row(version, session_id).iloc[0]
st.subheader(f"Session {session_id}")
ended = "open" if session["is_open"] else f"{session['end_reason']}"
duration = session["duration_seconds"]
st.caption(
    f"{session['tenant_id']} · {session['scenario']} · {session['pipeline']} · "
    f"{session['channel']} · started {session['started_at']:%Y-%m-%d %H:%M:%S} UTC · "
    f"{_seconds(duration)}"
    f" · ended: {ended}" + (" · has unpriced usage" if session["has_unpriced_usage"] else "")
)
cells = st.columns(5)
cells[0].metric("Revenue", money(session["revenue"], currency))
cells[1].metric("Cost", money(session["total_cost"], currency))
cells[2].metric("Gross margin", money(session["gross_margin"], currency))
cells[3].metric("Interruption waste", money(session["interruption_waste_cost"], currency))
cells[4].metric("Cache savings", money(session["cache_savings"], currency))

# ---- turns against the budget --------------------------------------------------------------------
st.subheader("Turns against the latency budget")
turns = queries.session_turns(version, session_id)
if turns.empty:
    st.caption("No latency measurements for this session.")
else:
    figure = go.Figure()
    labels = [f"turn {int(t)}" for t in turns["turn_index"]]
    start = pd.Series([0.0] * len(turns))
    for segment in queries.SEGMENTS:
        duration_ms = turns[f"{segment}_ms"].map(lambda v: None if pd.isna(v) else float(v))
        over = [
            pd.notna(d) and pd.notna(b) and float(d) > float(b)
            for d, b in zip(turns[f"{segment}_ms"], turns[f"{segment}_budget_ms"], strict=True)
        ]
        figure.add_bar(
            y=labels,
            x=duration_ms,
            base=start.tolist(),
            orientation="h",
            name=segment,
            marker={
                "color": SEGMENT_COLOURS[segment],
                "line": {"color": ["#d62728" if o else "rgba(0,0,0,0)" for o in over], "width": 3},
            },
            hovertemplate="%{y} " + segment + ": %{x} ms<extra></extra>",
        )
        # A segment waits for the one before it: the next bar starts where this one ends.
        start = start + duration_ms.fillna(0).astype(float)
    figure.add_scatter(
        y=labels,
        x=turns["first_audio_budget_ms"].astype(float),
        mode="markers",
        marker={"symbol": "line-ns-open", "size": 22, "color": "#d62728", "line": {"width": 3}},
        name="first-audio budget",
    )
    figure.update_layout(
        barmode="overlay",
        xaxis_title="ms since end of user speech",
        height=120 + 28 * len(turns),
        margin={"t": 10},
        yaxis={"autorange": "reversed"},
    )
    st.plotly_chart(figure, key="sessions_waterfall")
    st.caption(
        "Segments over their own budget are outlined in red; the red tick is the turn's first-audio budget."
    )
    show_table(
        turns,
        [
            Col("turn_index", "Turn", "int"),
            *[Col(f"{segment}_ms", segment, "ms") for segment in queries.SEGMENTS],
            Col("first_audio_ms", "First audio", "ms"),
            Col("first_audio_budget_ms", "First-audio budget", "ms"),
            Col("over_budget_segments", "Over budget"),
        ],
        currency,
        key="sessions_turns",
    )

# ---- ledger lines, interruptions, caches, degradations -------------------------------------------
lines = queries.session_lines(version, session_id)
st.subheader("Ledger lines")
show_table(
    lines,
    [
        Col("occurred_at", "At (UTC)"),
        Col("turn_index", "Turn", "int"),
        Col("component", "Component"),
        Col("provider", "Provider"),
        Col("model", "Model"),
        Col("phase", "Phase"),
        Col("route", "Route"),
        Col("meter", "Meter"),
        Col("quantity", "Quantity", "number"),
        Col("is_cache_hit", "Cache hit"),
        Col("amount", "Amount", "money"),
        Col("savings_amount", "Savings", "money"),
        Col("unpriced_reason", "Unpriced because"),
    ],
    currency,
    key="sessions_lines",
    empty="No usage lines.",
)

left, right = st.columns(2)
with left:
    st.subheader("Interruptions")
    show_table(
        queries.session_interruptions(version, session_id),
        [
            Col("turn_index", "Turn", "int"),
            Col("is_false_interruption", "False"),
            Col("wasted_output_tokens", "Wasted tokens", "int"),
            Col("wasted_tts_characters", "Wasted TTS characters", "int"),
            Col("waste_amount", "Waste", "money"),
            Col("unpriced_reason", "Unpriced because"),
        ],
        currency,
        key="sessions_interruptions",
        empty="No interruptions.",
    )
    st.subheader("Degradations")
    show_table(
        queries.session_degradations(version, session_id),
        [
            Col("occurred_at", "At (UTC)"),
            Col("kind", "Kind"),
            Col("turn_index", "Turn", "int"),
            Col("reason", "Reason"),
        ],
        currency,
        key="sessions_degradations",
        empty="No degradations.",
    )
with right:
    st.subheader("Cache hits")
    hits = lines[lines["savings_amount"].map(lambda v: v is not None and pd.notna(v) and v > 0)]
    show_table(
        hits,
        [
            Col("turn_index", "Turn", "int"),
            Col("component", "Component"),
            Col("meter", "Meter"),
            Col("quantity", "Quantity", "number"),
            Col("savings_kind", "Cache"),
            Col("savings_amount", "Saved", "money"),
        ],
        currency,
        key="sessions_cache_hits",
        empty="No cache hits.",
    )
