"""Query results turned into what a page shows: rounded, labelled tables and shared widgets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pandas as pd
import streamlit as st

from dashboards.formatting import money_float, pct_float, share_float

COMPONENT_LABELS = {
    "asr": "ASR",
    "llm": "LLM",
    "tts": "TTS",
    "realtime": "Realtime",
    "vision": "Vision",
    "infra": "Infra",
}

Kind = Literal["text", "int", "money", "share", "pct", "ms", "minutes", "bool", "number"]


@dataclass(frozen=True)
class Col:
    source: str
    header: str
    kind: Kind = "text"


def _header(col: Col, currency: str) -> str:
    if col.kind == "money":
        return f"{col.header} ({currency})"
    if col.kind in ("share", "pct"):
        return f"{col.header} (%)"
    if col.kind == "ms":
        return f"{col.header} (ms)"
    return col.header


def _convert(series: pd.Series, kind: Kind) -> pd.Series:
    if kind == "money":
        return series.map(lambda v: None if _missing(v) else money_float(v)).astype("Float64")
    if kind == "share":
        return series.map(lambda v: None if _missing(v) else share_float(v)).astype("Float64")
    if kind == "pct":
        return series.map(lambda v: None if _missing(v) else pct_float(v)).astype("Float64")
    if kind in ("ms", "minutes", "number"):
        return series.map(lambda v: None if _missing(v) else float(v)).astype("Float64")
    if kind == "int":
        return series.map(lambda v: None if _missing(v) else int(v)).astype("Int64")
    if kind == "text" and all(isinstance(v, str) for v in series if not _missing(v)):
        # A text column with gaps shows them empty rather than as "None".
        return series.astype("string")
    return series


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT


def present(frame: pd.DataFrame, columns: list[Col], currency: str) -> pd.DataFrame:
    """Pick, convert (money half-even to cents, shares to %) and label the columns to show."""
    shown = pd.DataFrame(
        {_header(col, currency): _convert(frame[col.source], col.kind) for col in columns}
    )
    return shown.reset_index(drop=True)


def column_config(columns: list[Col], currency: str) -> dict:
    config = {}
    for col in columns:
        header = _header(col, currency)
        if col.kind in ("money", "pct"):
            config[header] = st.column_config.NumberColumn(header, format="%.2f")
        elif col.kind == "share":
            config[header] = st.column_config.NumberColumn(header, format="%.1f")
        elif col.kind == "minutes":
            config[header] = st.column_config.NumberColumn(header, format="%.2f")
        elif col.kind == "ms":
            config[header] = st.column_config.NumberColumn(header, format="%.1f")
        elif col.kind == "int":
            config[header] = st.column_config.NumberColumn(header, format="%d")
    return config


def show_table(
    frame: pd.DataFrame,
    columns: list[Col],
    currency: str,
    *,
    key: str,
    empty: str = "Nothing in the selected period.",
    height: int | Literal["auto"] = "auto",
) -> pd.DataFrame | None:
    """Show a sortable table (click a header to sort); say so plainly when it is empty."""
    if frame.empty:
        st.caption(empty)
        return None
    shown = present(frame, columns, currency)
    st.dataframe(
        shown,
        hide_index=True,
        column_config=column_config(columns, currency),
        key=key,
        height=height,
    )
    return shown


def money_series(series: pd.Series) -> pd.Series:
    """Money for a chart axis: the half-even cent value as a float (NaN when unknown)."""
    return _convert(series, "money").astype("float64")


def share_series(series: pd.Series) -> pd.Series:
    """A rate for a chart axis, in percent (NaN when unknown)."""
    return _convert(series, "share").astype("float64")
