"""Experience board: the latency budget table, first audio, interruptions, caches, degradations,
concurrency — what the user felt, in the selected period."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboards import charts
from dashboards.comparison import Comparison
from dashboards.filters import page_context, page_header
from dashboards.formatting import milliseconds, ms_delta, share, share_delta
from dashboards.presentation import (
    DEGRADATION_LABELS,
    OVERSHOOT_BANDS,
    SEGMENT_LABELS,
    Col,
    column_config,
    human,
    overshoot_band,
    present,
    sessions_link,
    share_series,
    show_table,
)
from dashboards.queries import experience as queries
from ledger.escaping.streamlit_markdown import escape

BREAKDOWN_LABELS = {
    "none": "Profile only",
    "tenant": "Tenant",
    "scenario": "Scenario",
    "pipeline": "Pipeline",
    "provider": "LLM / realtime provider",
}


def _versus(ratio: object) -> str | None:
    """P95 against its budget: `+28.3%` over, `-12.0%` under."""
    if ratio is None or pd.isna(ratio):
        return None
    change = Decimal(str(ratio)) * 100 - 100
    return (
        f"{'+' if change > 0 else ''}{change.quantize(Decimal('0.1'), rounding=ROUND_HALF_EVEN)}%"
    )


context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header("Experience", context)
comparison = Comparison.of(context)

experience, earlier = (
    frame.iloc[0]
    for frame in queries.headline_pair(version, "experience", filters, comparison.previous)
)
if int(experience["sessions"]) == 0:
    st.info("No sessions in the selected period and filters. Widen the date range in the sidebar.")
    st.stop()
comparison = comparison.counted(int(earlier["sessions"]))
first_audio, first_audio_before = (
    frame.iloc[0]
    for frame in queries.headline_pair(version, "first_audio", filters, comparison.previous)
)

# ---- headline rates ------------------------------------------------------------------------------
row1, row2 = st.columns(4), st.columns(4)
row1[0].metric(
    "First audio P50",
    milliseconds(first_audio["p50_ms"]),
    comparison.delta(ms_delta(first_audio["p50_ms"], first_audio_before["p50_ms"])),
    delta_color="inverse",
    help="Median time from the end of the user's speech to the first audio, complete turns.",
)
row1[1].metric(
    "First audio P95",
    milliseconds(first_audio["p95_ms"]),
    comparison.delta(ms_delta(first_audio["p95_ms"], first_audio_before["p95_ms"])),
    delta_color="inverse",
    help="95th percentile of the same; linear interpolation.",
)
row1[2].metric(
    "Turns over first-audio budget",
    share(first_audio["over_budget_share"]),
    comparison.delta(
        share_delta(first_audio["over_budget_share"], first_audio_before["over_budget_share"])
    ),
    delta_color="inverse",
    help="Complete turns whose first audio is over their own budget ÷ complete turns.",
)
RATES = (
    ("Degraded sessions", "degradation_rate", "Sessions with a degradation ÷ sessions."),
    ("Interruption rate", "interruption_rate", "Interrupted turns ÷ turns."),
    (
        "False interruption rate",
        "false_interruption_rate",
        "False interruptions ÷ interrupted turns.",
    ),
    (
        "Prefix cache hit rate",
        "prefix_cache_hit_rate",
        "Cached input tokens ÷ input tokens (LLM and realtime).",
    ),
    (
        "TTS phrase cache hit rate",
        "tts_phrase_cache_hit_rate",
        "Cached TTS characters ÷ TTS characters.",
    ),
)
for cell, (label, column, explained) in zip([row1[3], *row2], RATES, strict=True):
    cell.metric(
        label,
        share(experience[column]),
        comparison.delta(share_delta(experience[column], earlier[column])),
        delta_color="off" if "cache" in column else "inverse",
        help=explained,
    )
st.caption(
    f"{int(first_audio['turns']):,} complete turns and {int(experience['turns']):,} turns in "
    f"{int(experience['sessions']):,} sessions; "
    f"{int(experience['interrupted_turns']):,} interrupted, "
    f"{int(experience['false_interrupted_turns']):,} of them falsely. "
    f"Vision embedding cache hit rate: {share(experience['vision_cache_hit_rate'])} "
    "(cached images ÷ images). " + comparison.note()
)

# ---- latency budget table ------------------------------------------------------------------------
st.subheader("Latency budget")
breakdown = st.segmented_control(
    "Break down by",
    options=list(BREAKDOWN_LABELS),
    default="none",
    format_func=BREAKDOWN_LABELS.get,
    key="experience_budget_breakdown",
    required=True,
)
breakdown = breakdown or "none"
budget = queries.latency_budget(version, filters, breakdown)
budget["band"] = [overshoot_band(r)[0] for r in budget["p95_budget_ratio"]]
budget["versus"] = budget["p95_budget_ratio"].map(_versus)
budget["segment_name"] = budget["segment"].map(SEGMENT_LABELS)
budget["slowest"] = [
    sessions_link(
        filters.date_from,
        filters.date_to,
        tenants=(group,) if breakdown == "tenant" else filters.tenants,
        scenarios=(group,) if breakdown == "scenario" else tuple(scenarios),
        pipelines=(group,) if breakdown == "pipeline" else filters.pipelines,
        sort=f"slowest:{segment}",
    )
    for group, segment, scenarios in zip(
        budget["breakdown"], budget["segment"], budget["profile_scenarios"], strict=True
    )
]
budget["owner"] = budget["owner"].fillna("all")
columns = [
    Col("profile", "Budget profile", help="The scenarios whose budgets these are."),
    *([Col("breakdown", BREAKDOWN_LABELS[breakdown])] if breakdown != "none" else []),
    Col("segment_name", "Segment", width="medium"),
    Col("owner", "Owner", width="small"),
    Col("budget_ms", "Budget", "ms"),
    Col("p95_ms", "P95", "ms"),
    Col("versus", "P95 vs budget", help="P95 ÷ budget − 1: how far over (+) or under (−)."),
    Col("band", "Status"),
    Col("p50_ms", "P50", "ms"),
    Col(
        "over_budget_share",
        "Turns over budget",
        "share",
        help="Measured turns above their budget ÷ measured turns.",
    ),
    Col("measured_turns", "Turns measured", "int"),
    Col("slowest", "Slowest sessions", "link", display="Open"),
]
shown = present(budget, columns, currency)
styles = [overshoot_band(r)[1] for r in budget["p95_budget_ratio"]]
coloured = ["P95 (ms)", "P95 vs budget", "Status"]
styled = shown.style.apply(
    lambda column: styles if column.name in coloured else [""] * len(column), axis=0
)
st.dataframe(
    styled,
    hide_index=True,
    column_config=column_config(columns, currency, pinned=2 if breakdown == "none" else 3),
    key="experience_budget",
)
segments_only = budget[budget["segment"] != "first_audio"].dropna(subset=["p95_budget_ratio"])
if not segments_only.empty:
    worst = segments_only.sort_values(
        ["p95_budget_ratio", "segment_order"], ascending=[False, True]
    ).iloc[0]
    st.caption(
        f"Each row holds the turns of one budget profile, so each has one budget. Colour: how "
        f"far the P95 is over its budget ({', '.join(b[1] for b in OVERSHOOT_BANDS)}). Worst "
        f"line at P95: **{SEGMENT_LABELS[worst['segment']]}** of {escape(worst['profile'])} "
        f"(owner: {escape(worst['owner'])}), {_versus(worst['p95_budget_ratio'])} against its budget."
    )

# ---- trends --------------------------------------------------------------------------------------
left, right = st.columns(2)
with left:
    st.subheader("First audio per day")
    trend = queries.first_audio_trend(version, filters)
    figure = go.Figure()
    figure.add_scatter(
        x=trend["business_date"], y=trend["p50_ms"], name="P50", mode="lines+markers"
    )
    figure.add_scatter(
        x=trend["business_date"], y=trend["p95_ms"], name="P95", mode="lines+markers"
    )
    figure.update_layout(yaxis_title="ms", height=320, margin={"t": 10})
    st.plotly_chart(figure, key="experience_first_audio")
with right:
    st.subheader("Interruptions and caches per day")
    daily = queries.experience_daily(version, filters)
    rates = go.Figure()
    for column, name in (
        ("interruption_rate", "Interruption rate"),
        ("false_interruption_rate", "False interruption rate"),
        ("prefix_cache_hit_rate", "Prefix cache hit rate"),
        ("tts_phrase_cache_hit_rate", "TTS phrase cache hit rate"),
    ):
        rates.add_scatter(x=daily["business_date"], y=share_series(daily[column]), name=name)
    rates.update_layout(yaxis_title="%", height=320, margin={"t": 10})
    st.plotly_chart(rates, key="experience_rates")

# ---- degradations --------------------------------------------------------------------------------
st.subheader("Degradations by kind")
kinds = queries.degradations_by_kind(version, filters)
kinds["kind_name"] = kinds["kind"].map(lambda k: human(k, DEGRADATION_LABELS))
left, right = st.columns([1, 1])
with left:
    show_table(
        kinds,
        [
            Col("kind_name", "Kind"),
            Col("degradations", "Events", "int"),
            Col("degraded_sessions", "Sessions", "int"),
            Col(
                "degradation_rate",
                "Share of sessions",
                "share",
                help="Sessions with this degradation ÷ sessions.",
            ),
        ],
        currency,
        key="experience_degradations",
    )
with right:
    if int(kinds["degradations"].sum()) > 0:
        st.plotly_chart(
            charts.bar(
                kinds,
                x="kind_name",
                y="degradations",
                labels={"kind_name": "", "degradations": "Events"},
                height=260,
            ),
            key="experience_degradations_chart",
        )

# ---- concurrency ---------------------------------------------------------------------------------
st.subheader("Concurrency")
concurrency = queries.concurrency_daily(version, filters)
if concurrency.empty:
    st.caption("No session time in the selected period.")
else:
    st.plotly_chart(
        charts.line(
            concurrency,
            x="business_date",
            y="peak_concurrent_sessions",
            color="tenant_id",
            labels={
                "business_date": "",
                "peak_concurrent_sessions": "Peak concurrent sessions",
                "tenant_id": "Tenant",
            },
            height=300,
        ),
        key="experience_concurrency_chart",
    )
    peaks = (
        concurrency.groupby("tenant_id", as_index=False)
        .agg(
            peak=("peak_concurrent_sessions", "max"),
            p95=("max_hourly_p95_concurrent_sessions", "max"),
        )
        .sort_values("tenant_id")
    )
    show_table(
        peaks,
        [
            Col("tenant_id", "Tenant"),
            Col("peak", "Peak concurrent sessions", "int"),
            Col("p95", "Highest hourly P95", "int"),
        ],
        currency,
        key="experience_concurrency",
    )
    st.caption(
        "Concurrent sessions are paths: ASR/TTS pools scale on them. Per tenant across every "
        "scenario and pipeline, so only the tenant and date filters apply here."
    )
