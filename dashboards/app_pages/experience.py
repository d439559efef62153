"""Experience board: the latency budget table, first audio, interruptions, caches, degradations,
concurrency — what the user felt, in the selected period."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboards.filters import page_context, page_header
from dashboards.formatting import milliseconds, share, share_float
from dashboards.presentation import Col, share_series, show_table
from dashboards.queries import experience as queries

SEGMENT_LABELS = {
    "endpointing": "Endpointing",
    "stt_final": "STT finalisation",
    "llm_ttft": "LLM time to first token",
    "tts_first_frame": "TTS first frame",
    "network_playback": "Network / playback",
    "first_audio": "First audio (total)",
}
OVER_BUDGET_STYLE = "background-color: #fde0dc; color: #8c1d18; font-weight: 600"

context = page_context()
filters, currency, version = context.filters, context.currency, context.version
page_header("Experience", context)

budget = queries.latency_budget(version, filters)
experience = queries.experience_totals(version, filters).iloc[0]
if int(experience["sessions"]) == 0:
    st.info("No sessions in the selected period and filters. Widen the date range in the sidebar.")
    st.stop()


def _budget_text(low: object, high: object) -> str:
    if pd.isna(low):
        return "—"
    low, high = int(low), int(high)
    # Several scenario tiers (or a tenant override) in view: show the range of budgets in play.
    return f"{low}" if low == high else f"{low}–{high}"


# ---- latency budget table ------------------------------------------------------------------------
st.subheader("Latency budget")
over = budget["p95_budget_ratio"].map(lambda v: bool(pd.notna(v) and v > 1))
table = pd.DataFrame(
    {
        "Segment": budget["segment"].map(SEGMENT_LABELS),
        "Budget (ms)": [
            _budget_text(lo, hi)
            for lo, hi in zip(budget["min_budget_ms"], budget["max_budget_ms"], strict=True)
        ],
        "Owner": budget["owner"].fillna("all"),
        "P50 (ms)": budget["p50_ms"].astype("Float64"),
        "P95 (ms)": budget["p95_ms"].astype("Float64"),
        "Over budget (%)": budget["over_budget_share"].map(share_float).astype("Float64"),
        "P95 over budget": over,
        "Turns measured": budget["measured_turns"].astype("Int64"),
    }
)
# A static table (not a grid): six lines read at a glance, and the highlight prints as drawn.
styled = table.style.apply(
    lambda row: [OVER_BUDGET_STYLE if row["P95 over budget"] else "" for _ in row], axis=1
).format(
    {
        "P50 (ms)": "{:,.1f}",
        "P95 (ms)": "{:,.1f}",
        "Over budget (%)": "{:.1f}",
        "P95 over budget": lambda over: "over" if over else "within",
    },
    na_rep="—",
)
st.table(styled, hide_index=True)
segments_only = budget[budget["segment"] != "first_audio"].dropna(subset=["p95_budget_ratio"])
if not segments_only.empty:
    worst = segments_only.sort_values(
        ["p95_budget_ratio", "segment_order"], ascending=[False, True]
    )
    worst = worst.iloc[0]
    verdict = "over" if worst["p95_budget_ratio"] > 1 else "within"
    st.caption(
        f"Highlighted: segments whose P95 is over budget. Worst segment at P95: "
        f"**{SEGMENT_LABELS[worst['segment']]}** (owner: {worst['owner']}), P95 at "
        f"{worst['p95_budget_ratio']:.2f}× its budget — {verdict} budget. "
        "Over budget (%) is the share of measured turns above their own budget."
    )

# ---- headline rates ------------------------------------------------------------------------------
first_audio = budget[budget["segment"] == "first_audio"].iloc[0]
row1, row2 = st.columns(4), st.columns(4)
row1[0].metric("First audio P50", milliseconds(first_audio["p50_ms"]))
row1[1].metric("First audio P95", milliseconds(first_audio["p95_ms"]))
row1[2].metric("Turns over first-audio budget", share(first_audio["over_budget_share"]))
row1[3].metric("Degraded sessions", share(experience["degradation_rate"]))
row2[0].metric("Interruption rate", share(experience["interruption_rate"]))
row2[1].metric("False interruption rate", share(experience["false_interruption_rate"]))
row2[2].metric("Prefix cache hit rate", share(experience["prefix_cache_hit_rate"]))
row2[3].metric("TTS phrase cache hit rate", share(experience["tts_phrase_cache_hit_rate"]))
st.caption(
    f"{int(experience['turns']):,} turns in {int(experience['sessions']):,} sessions; "
    f"{int(experience['interrupted_turns']):,} interrupted, "
    f"{int(experience['false_interrupted_turns']):,} of them falsely. "
    f"Vision embedding cache hit rate: {share(experience['vision_cache_hit_rate'])}."
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
left, right = st.columns([1, 1])
with left:
    show_table(
        kinds,
        [
            Col("kind", "Kind"),
            Col("degradations", "Events", "int"),
            Col("degraded_sessions", "Sessions", "int"),
            Col("degradation_rate", "Share of sessions", "share"),
        ],
        currency,
        key="experience_degradations",
    )
with right:
    if int(kinds["degradations"].sum()) > 0:
        st.plotly_chart(
            px.bar(
                kinds,
                x="kind",
                y="degradations",
                labels={"kind": "", "degradations": "Events"},
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
        px.line(
            concurrency,
            x="business_date",
            y="peak_concurrent_sessions",
            color="tenant_id",
            markers=True,
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
