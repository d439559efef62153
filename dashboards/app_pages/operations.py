"""Operations: shadow-mode verdicts (switch the endpointing model or not) and pool capacity."""

from __future__ import annotations

from datetime import date, timedelta

import pandas as pd
import plotly.express as px
import streamlit as st

from dashboards.comparison import week_label
from dashboards.filters import page_context, page_header
from dashboards.presentation import Col, show_table
from dashboards.queries import operations as queries

context = page_context()
filters, currency, version = context.filters, context.currency, context.version
first, last = context.publication.first_date, context.publication.last_date


def monday_of(iso_week: str) -> date:
    return date.fromisocalendar(int(iso_week[:4]), int(iso_week[6:]), 1)


def week_shown(iso_week: str) -> str:
    """`2026-W49 (Nov 30–Dec 06) · partial, 1 of 7 days`: a week the ledger's data covers only in
    part says so (these figures are whole ISO weeks, whatever the selected dates)."""
    return week_label(iso_week, monday_of(iso_week), first, last)


def whole(iso_week: str) -> bool:
    monday = monday_of(iso_week)
    return first <= monday and monday + timedelta(days=6) <= last


page_header(
    "Operations",
    context,
    "Candidates running in shadow beside production, and what each shared GPU pool scales on. "
    "Both are per ISO week: a week shows when it overlaps the selected period.",
)

st.subheader("Shadow mode: switch or not")
shadow = queries.shadow_weekly(version, filters)
if shadow.empty:
    st.caption(
        "No shadow comparisons in the selected period: send `turn.shadow` events for a candidate "
        "(`ledger simulate` does for `eou-v2`)."
    )
else:
    min_turns = int(shadow["min_turns"].max())
    st.markdown(
        "**How the verdict is reached: exact tests.** On the turns that have both a production "
        "endpointing segment and the candidate's decision, each turn says whether the candidate "
        "would have ended the user's turn sooner or later, and whether it would have avoided or "
        "added a false interruption. For each measure, the **exact sign test** (for false "
        "interruptions, McNemar's exact test): the two-sided binomial p-value of that many turns "
        "better against worse if the candidate were as often better as worse; below 0.05 the "
        "candidate is better or worse on it. **switch**: better on one, worse on neither; "
        "**don't**: worse on either, or better on neither; **not enough turns yet**: fewer than "
        f"{min_turns} compared turns. The interval shown is the distribution-free 95% "
        "confidence interval of the median endpointing change (order statistics)."
    )
    shadow["week_shown"] = [week_shown(w) for w in shadow["iso_week"]]
    show_table(
        shadow,
        [
            Col("week_shown", "Week", width="medium"),
            Col("tenant_id", "Tenant"),
            Col("scenario", "Scenario"),
            Col("candidate", "Candidate"),
            Col("verdict_label", "Verdict"),
            Col("compared_turns", "Compared turns", "int"),
            Col("production_endpointing_p50_ms", "Endpointing P50, production", "ms"),
            Col("candidate_endpointing_p50_ms", "Endpointing P50, candidate", "ms"),
            Col("production_endpointing_p95_ms", "Endpointing P95, production", "ms"),
            Col("candidate_endpointing_p95_ms", "Endpointing P95, candidate", "ms"),
            Col("production_first_audio_p95_ms", "First audio P95, production", "ms"),
            Col("candidate_first_audio_p95_ms", "First audio P95, candidate", "ms"),
            Col("endpointing_faster_turns", "Turns ended sooner", "int"),
            Col("endpointing_slower_turns", "Turns ended later", "int"),
            Col("endpointing_p_value", "Endpointing p-value", "p_value"),
            Col("endpointing_delta_median_ms", "Endpointing change, median", "ms"),
            Col("endpointing_delta_ci_low_ms", "95% interval from", "ms"),
            Col("endpointing_delta_ci_high_ms", "95% interval to", "ms"),
            Col("production_false_interruption_rate", "False interruptions, production", "share"),
            Col("candidate_false_interruption_rate", "False interruptions, candidate", "share"),
            Col("false_interruptions_avoided", "False interruptions avoided", "int"),
            Col("false_interruptions_added", "False interruptions added", "int"),
            Col("false_interruption_p_value", "False interruption p-value", "p_value"),
            Col("waste_avoided_cost", "Waste avoided", "money"),
            Col("waste_added_cost", "Waste added", "money"),
            Col("waste_net_cost", "Net waste (+ costs money)", "money"),
        ],
        currency,
        key="operations_shadow",
    )
    st.caption(
        "False interruption rates are false / all interruptions of each (SPEC 6); waste is "
        "priced at the turn's own rates, like interruption waste."
    )
    daily = queries.shadow_daily(version, filters)
    if not daily.empty:
        st.plotly_chart(
            px.line(
                daily,
                x="business_date",
                y="endpointing_delta_median_ms",
                color="comparison",
                markers=True,
                labels={
                    "business_date": "",
                    "endpointing_delta_median_ms": "Endpointing change, median (ms)",
                    "comparison": "Tenant / scenario / candidate",
                },
                height=300,
            ),
            key="operations_shadow_daily",
        )
        st.caption("Below zero: the candidate would have ended the user's turn sooner that day.")

st.subheader("Pool capacity")
capacity = queries.capacity_weekly(version, filters)
if not capacity.empty:
    capacity["week_shown"] = [week_shown(w) for w in capacity["iso_week"]]
    # A partial week is never compared as if whole: no change against or from one.
    capacity["llm_tokens_per_second_peak_change_pct"] = [
        change if whole(week) and whole(f"{monday_of(week) - timedelta(days=7):%G-W%V}") else None
        for week, change in zip(
            capacity["iso_week"], capacity["llm_tokens_per_second_peak_change_pct"], strict=True
        )
    ]
show_table(
    capacity,
    [
        Col("week_shown", "Week", width="medium"),
        Col("pool_load_of", "Pool load of"),
        Col("llm_tokens_per_second_peak", "LLM tokens/s, peak minute", "measure"),
        Col(
            "llm_tokens_per_second_p95_hourly_peak", "LLM tokens/s, P95 of hourly peaks", "measure"
        ),
        Col(
            "llm_tokens_per_second_peak_change_pct",
            "LLM peak vs week before (%)",
            "measure",
            help="Only between two whole weeks of data: a partial week is not compared.",
        ),
        Col("encoder_images_per_second_peak", "Encoder images/s, peak minute", "measure"),
        Col(
            "encoder_images_per_second_p95_hourly_peak",
            "Encoder images/s, P95 of hourly peaks",
            "measure",
        ),
        Col("peak_concurrent_paths", "Concurrent paths, peak", "int"),
        Col("concurrent_paths_p95_hourly_peak", "Concurrent paths, P95 of hourly peaks", "measure"),
        Col("peak_concurrent_sessions", "Concurrent sessions (all pipelines), peak", "int"),
        Col("peak_concurrent_realtime_sessions", "Concurrent realtime sessions, peak", "int"),
        Col("vision_cache_hit_rate", "Vision cache hit rate", "share"),
        Col("vision_cache_gib", "Vision cache size (GiB)", "measure"),
        Col(
            "encoder_images_per_second_saved_per_10_points",
            "Encoder images/s saved per 10 points of hit rate",
            "measure",
        ),
    ],
    currency,
    key="operations_capacity",
    pinned=2,
    empty="No pool load in the selected period.",
)
st.caption(
    "LLM pools scale on tokens per second (uncached input + output), the vision encoder on "
    "bursts (images that missed the embedding cache, peak over 1-minute windows), ASR and TTS "
    "pools on concurrent paths: the concurrent cascade sessions, as an end-to-end realtime "
    "session holds no ASR or TTS path (per tenant: tenant peaks do not add up). Cache size = hot-set "
    "images × image tokens per image × embedding dimensions × bytes per value (reference "
    "settings `planning.yaml`)."
)
hourly = queries.capacity_hourly(version, filters)
if not hourly.empty:
    # Hours without load are gaps, not a line drawn across them: every series gets every hour.
    hours = pd.date_range(
        hourly["local_hour_start"].min(), hourly["local_hour_start"].max(), freq="h"
    )
    hourly = (
        hourly.set_index(["pool_load_of", "local_hour_start"])
        .reindex(pd.MultiIndex.from_product([hourly["pool_load_of"].unique(), hours],
                                            names=["pool_load_of", "local_hour_start"]))
        .reset_index()
    )  # fmt: skip
    st.plotly_chart(
        px.line(
            hourly,
            x="local_hour_start",
            y="llm_tokens_per_second_peak",
            color="pool_load_of",
            labels={
                "local_hour_start": "",
                "llm_tokens_per_second_peak": "LLM tokens/s, peak minute of the hour",
                "pool_load_of": "Pool load of",
            },
            height=300,
        ),
        key="operations_capacity_hourly",
    )
