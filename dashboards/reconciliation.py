"""The reconciliation section of the data-quality page (SPEC 10): priced usage against what
providers billed, per UTC day x provider x component, from `marts.fct_reconciliation_daily`.

Provider bills are not per tenant, so the section follows the sidebar's dates only.
"""

from __future__ import annotations

from datetime import date

import pandas as pd
import streamlit as st

from dashboards.connection import run
from dashboards.presentation import COMPONENT_LABELS, Col, show_table

QUERY_TTL_SECONDS = 300


@st.cache_data(ttl=QUERY_TTL_SECONDS, max_entries=32, show_spinner=False)
def reconciliation_days(version: str, date_from: date, date_to: date) -> pd.DataFrame:
    """Reconciled days in [date_from, date_to], drifts first; empty before the mart exists."""
    present = run(
        version,
        "select count(*) as n from information_schema.tables "
        "where table_schema = 'marts' and table_name = 'fct_reconciliation_daily'",
    )
    if int(present["n"].iloc[0]) == 0:
        return pd.DataFrame()
    sql = """
        select usage_date, provider, component, priced_cost, reported_cost, difference,
            difference_pct, is_over_tolerance, top_model
        from marts.fct_reconciliation_daily
        where usage_date between ? and ?
        order by is_over_tolerance desc, usage_date desc, abs(difference) desc, provider, component
    """
    frame = run(version, sql, [date_from, date_to])
    frame["component"] = frame["component"].map(lambda c: COMPONENT_LABELS.get(c, c))
    frame["status"] = frame["is_over_tolerance"].map(
        lambda over: "rate card drift" if over else "within tolerance"
    )
    return frame


def show_reconciliation(version: str, date_from: date, date_to: date, currency: str) -> None:
    st.subheader("Reconciliation with provider bills")
    days = reconciliation_days(version, date_from, date_to)
    drifts = 0 if days.empty else int(days["is_over_tolerance"].sum())
    st.caption(
        "What providers billed (cost.reported events, imported bills: `ledger reconcile import`) "
        "against what the rate card priced, per UTC day, provider and component. A difference "
        "over 2% and at least 1 unit of the reporting currency a day is rate card drift: the "
        f"rate card most likely holds a stale price. {drifts:,} drifting days in the period."
    )
    show_table(
        days,
        [
            Col("usage_date", "Day (UTC)"),
            Col("provider", "Provider"),
            Col("component", "Component"),
            Col("priced_cost", "Priced", "money"),
            Col("reported_cost", "Billed", "money"),
            Col("difference", "Difference", "money"),
            Col("difference_pct", "Difference", "pct"),
            Col("status", "Status"),
            Col("top_model", "Model most off"),
        ],
        currency,
        key="quality_reconciliation",
        empty="No provider bill or reported cost to reconcile in the selected period.",
    )
