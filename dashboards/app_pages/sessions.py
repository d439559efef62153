"""Session explorer: find a session, read its ledger lines, turns, interruptions, caches and
degradations."""

from __future__ import annotations

import hashlib
from decimal import Decimal

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards.filters import page_context, page_header
from dashboards.formatting import money
from dashboards.presentation import (
    DEGRADATION_LABELS,
    SAVINGS_LABELS,
    SEGMENT_LABELS,
    Col,
    human,
    meter_label,
    segment_list,
    sessions_link,
    show_table,
)
from dashboards.queries import sessions as queries
from ledger.core.numbers import round_places, round_to_total
from ledger.core.vocabulary import BUDGET_LINES
from ledger.escaping.streamlit_markdown import escape

SEGMENT_COLOURS = {
    "endpointing": "#4c78a8",
    "stt_final": "#72b7b2",
    "llm_ttft": "#f58518",
    "tts_first_frame": "#54a24b",
    "network_playback": "#b279a2",
}


LINE_PLACES = 4


def _seconds(value: object) -> str:
    return "no end yet" if value is None or pd.isna(value) else f"{float(value):.1f} s"


TRIAGE_LABELS = {
    "negative_margin": "Negative margin",
    "over_budget": "Over latency budget",
    "degraded": "Degraded",
    "unpriced": "Unpriced usage",
}
SORT_LABELS = {
    "newest": "Newest first",
    "margin": "Lowest margin first",
    "cost": "Highest cost first",
    "over_budget": "Most turns over budget first",
    **{f"slowest:{line}": f"Slowest {SEGMENT_LABELS[line]} first" for line in BUDGET_LINES},
}


context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header("Session explorer", context)

# A drill-down link's dates, tenants, scenarios and pipelines are the sidebar's (read from the
# URL by dashboards/filters.py); the explorer's own parameters are its order and the session.
link = {key: st.query_params.get_all(key) for key in st.query_params}
linked_sort = link.get("sort", [None])[0]
if linked_sort in SORT_LABELS and "sessions_sort" not in st.session_state:
    st.session_state["sessions_sort"] = linked_sort

text = st.text_input(
    "Session id",
    key="sessions_search",
    placeholder="Paste a session id, or part of one",
    help="Searching by id looks at every date; without it, the list follows the filters.",
).strip()
left, middle, right = st.columns([3, 2, 1])
flags = tuple(
    left.multiselect(
        "Show only sessions with",
        options=list(TRIAGE_LABELS),
        format_func=TRIAGE_LABELS.get,
        key="sessions_flags",
        placeholder="Any session",
        help="Negative margin: cost above revenue. Over latency budget: at least one turn with a "
        "segment or its first audio over its budget. Degraded: at least one degradation. "
        "Unpriced usage: a meter with no price (its cost is unknown).",
    )
)
sort = middle.selectbox(
    "Order", options=list(SORT_LABELS), format_func=SORT_LABELS.get, key="sessions_sort"
)
total = queries.count_sessions(version, filters, text, flags)
pages = max(1, -(-total // queries.PAGE_SIZE))
page = int(
    right.number_input("Page", min_value=1, max_value=pages, value=1, step=1, key="sessions_page")
)
page = min(page, pages)
found = queries.find_sessions(version, filters, text, flags, sort, page)
opened = link.get("session", [None])[0]
if opened and queries.session_ledger_row(version, opened).empty:
    # A linked session is looked up on the reader's own view of the ledger (their tenants only):
    # an id that names no session there, or another tenant's, is said so and never opened.
    st.warning(
        f"No such session in your tenants: “{escape(opened)}”. Check the link, or find the "
        "session below by its id."
    )
    opened = None
if found.empty and not opened:
    st.info(
        "No session matches. Check the id, or widen the dates and tenants in the sidebar."
        if text
        else "No session matches the filters."
    )
    st.stop()

first = (page - 1) * queries.PAGE_SIZE + 1
st.caption(
    f"{total:,} session{'' if total == 1 else 's'}"
    + (f" whose id contains “{escape(text)}”" if text else "")
    + (f" with {', '.join(TRIAGE_LABELS[f].lower() for f in flags)}" if flags else "")
    + f" · {SORT_LABELS[sort].lower()} · page {page} of {pages} "
    f"(rows {first:,}–{first + len(found) - 1:,}). Click a row to open the session."
    if not found.empty
    else "No session in the list."
)
found["status"] = ["open" if pd.isna(reason) else str(reason) for reason in found["end_reason"]]
found["open_link"] = [
    sessions_link(filters.date_from, filters.date_to, session=s) for s in found["session_id"]
]
# The list's identity: a filter, search, order or page change shows another list, whose row
# selection starts empty (a row index kept from the old list would name another session).
listing = hashlib.sha256(repr((filters, text, flags, sort, page)).encode()).hexdigest()[:12]
st.session_state["_sessions_listing"] = f"sessions_found_{listing}"
selection = show_table(
    found,
    [
        Col("open_link", "Link", "link", display="Open", width="small"),
        Col("session_id", "Session", width="medium"),
        Col("tenant_id", "Tenant", width="small"),
        Col("business_date", "Date", width="small"),
        Col("gross_margin", "Gross margin", "money", width="small"),
        Col("total_cost", "Cost", "money", width="small"),
        Col("revenue", "Revenue", "money", width="small"),
        Col("turns_over_budget", "Turns over budget", "int"),
        Col("degradation_count", "Degradations", "int"),
        Col("has_unpriced_usage", "Unpriced usage", "bool"),
        Col("turn_count", "Turns", "int"),
        Col("interruption_count", "Interruptions", "int"),
        Col("scenario", "Scenario"),
        Col("pipeline", "Pipeline"),
        Col("status", "Ended"),
    ],
    currency,
    key=f"sessions_found_{listing}",
    height=280,
    on_select="rerun",
    selection_mode="single-row",
    empty="No session in the list.",
    pinned=2,
)
clicked = None
state = st.session_state.get(f"sessions_found_{listing}")
if state is not None and not found.empty:
    rows = state["selection"]["rows"]
    if rows and rows[0] < len(found):
        clicked = found["session_id"].iloc[rows[0]]
options = found["session_id"].tolist()
for extra in (opened, clicked):
    if extra and extra not in options:
        options.insert(0, extra)
if clicked and st.session_state.get("_sessions_clicked") != (listing, clicked):
    # A new click opens its session; the same click seen again on a later run does not undo a
    # choice made in the box since.
    st.session_state["_sessions_clicked"] = (listing, clicked)
    st.session_state["sessions_selected"] = clicked
elif opened and "sessions_selected" not in st.session_state:
    st.session_state["sessions_selected"] = opened
if st.session_state.get("sessions_selected") not in options:
    # The session shown before is not in this list: open the list's first, and say so below.
    st.session_state.pop("sessions_selected", None)
session_id = st.selectbox("Session to open", options=options, key="sessions_selected")
if not session_id:
    st.stop()
listed = found["session_id"].tolist()
where = (
    f"row {listed.index(session_id) + 1:,} of this page"
    if session_id in listed
    else "not in this list (opened by a link or a search)"
)
st.caption(f"Showing session {escape(session_id)}: {where}.")

session = queries.session_ledger_row(version, session_id).iloc[0]
st.subheader(f"Session {escape(session_id)}")
ended = "open" if session["is_open"] else escape(session["end_reason"])
duration = session["duration_seconds"]
st.caption(
    f"{escape(session['tenant_id'])} · {escape(session['scenario'])} · "
    f"{escape(session['pipeline'])} · {escape(session['channel'])} · started {session['started_at']:%Y-%m-%d %H:%M:%S} UTC · "
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
turns = queries.session_turns(version, session_id, session["business_date"])
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
            name=SEGMENT_LABELS[segment],
            marker={
                "color": SEGMENT_COLOURS[segment],
                "line": {"color": ["#d62728" if o else "rgba(0,0,0,0)" for o in over], "width": 3},
            },
            hovertemplate="%{y} " + SEGMENT_LABELS[segment] + ": %{x} ms<extra></extra>",
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
    turns["over_budget_names"] = turns["over_budget_segments"].map(segment_list)
    show_table(
        turns,
        [
            Col("turn_index", "Turn", "int"),
            Col("first_audio_ms", "First audio", "ms"),
            Col("first_audio_budget_ms", "First-audio budget", "ms"),
            Col("over_budget_names", "Over budget", help="Segments over their own budget."),
            *[Col(f"{segment}_ms", SEGMENT_LABELS[segment], "ms") for segment in queries.SEGMENTS],
        ],
        currency,
        key="sessions_turns",
    )

# ---- ledger lines, interruptions, caches, degradations -------------------------------------------
lines = queries.session_lines(version, session_id)
# A line is a cache hit when it is served from a cache (tokens, characters or images from one):
# the same rule picks the cache-hit table below.
lines["cache_hit"] = [
    bool(hit) or (pd.notna(kind) and pd.notna(quantity) and quantity > 0)
    for hit, kind, quantity in zip(
        lines["is_cache_hit"], lines["savings_kind"], lines["quantity"], strict=True
    )
]
# Four places, nudged where needed so the lines add up to the session's exact figures.
lines["amount_shown"] = round_to_total(
    [None if pd.isna(v) else v for v in lines["amount"]], LINE_PLACES
)
lines["savings_shown"] = round_to_total(
    [None if pd.isna(v) else v for v in lines["savings_amount"]], LINE_PLACES
)
lines["meter"] = lines["meter"].map(meter_label)
st.subheader("Ledger lines")
show_table(
    lines,
    [
        Col("meter", "Meter"),
        Col("amount_shown", f"Amount ({currency})", "amount"),
        Col("savings_shown", f"Savings ({currency})", "amount"),
        Col("cache_hit", "Cache hit", "bool"),
        Col("quantity", "Quantity", "number"),
        Col("turn_index", "Turn", "int"),
        Col("provider", "Provider"),
        Col("model", "Model"),
        Col("phase", "Phase"),
        Col("route", "Route"),
        Col("unpriced_reason", "Unpriced because"),
        Col("occurred_at", "At (UTC)"),
    ],
    currency,
    key="sessions_lines",
    empty="No usage lines.",
    places=LINE_PLACES,
)
if not lines.empty:
    priced = [v for v in lines["amount_shown"] if v is not None]
    saved = [v for v in lines["savings_shown"] if v is not None]
    st.caption(
        f"Amounts to {LINE_PLACES} decimal places, rounded half-even; where the rounded lines "
        f"would not add up, the fewest lines move by 0.{'0' * (LINE_PLACES - 1)}1 so they do: "
        f"lines {currency} {sum(priced, Decimal(0)):,.{LINE_PLACES}f} = session cost "
        f"{currency} {round_places(session['total_cost'], LINE_PLACES):,.{LINE_PLACES}f}; "
        f"savings {currency} {sum(saved, Decimal(0)):,.{LINE_PLACES}f} = session cache savings "
        f"{currency} {round_places(session['cache_savings'], LINE_PLACES):,.{LINE_PLACES}f}. "
        "A blank amount has no price in effect (not 0)."
    )

left, right = st.columns(2)
with left:
    st.subheader("Interruptions")
    show_table(
        queries.session_interruptions(version, session_id),
        [
            Col("turn_index", "Turn", "int"),
            Col("waste_amount", "Waste", "money"),
            Col("is_false_interruption", "False", "bool"),
            Col("wasted_output_tokens", "Wasted tokens", "int"),
            Col("wasted_tts_characters", "Wasted TTS characters", "int"),
            Col("unpriced_reason", "Unpriced because"),
        ],
        currency,
        key="sessions_interruptions",
        empty="No interruptions.",
    )
    st.subheader("Degradations")
    show_table(
        queries.session_degradations(version, session_id).assign(
            kind=lambda frame: frame["kind"].map(lambda k: human(k, DEGRADATION_LABELS))
        ),
        [
            Col("kind", "Kind"),
            Col("turn_index", "Turn", "int"),
            Col("reason", "Reason"),
            Col("occurred_at", "At (UTC)"),
        ],
        currency,
        key="sessions_degradations",
        empty="No degradations.",
    )
with right:
    st.subheader("Cache hits")
    hits = lines[lines["cache_hit"]].assign(
        cache=lambda frame: frame["savings_kind"].map(lambda k: human(k, SAVINGS_LABELS))
    )
    show_table(
        hits,
        [
            Col("meter", "Meter"),
            Col("savings_shown", f"Saved ({currency})", "amount"),
            Col("cache", "Cache"),
            Col("quantity", "Quantity", "number"),
            Col("turn_index", "Turn", "int"),
        ],
        currency,
        key="sessions_cache_hits",
        empty="No cache hits.",
        places=LINE_PLACES,
    )
