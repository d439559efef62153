"""Query results turned into what a page shows: rounded, labelled tables and shared widgets."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Literal

import pandas as pd
import streamlit as st

from dashboards.formatting import money, money_float, pct_float, share_float
from ledger.core.numbers import p_value, round_to_total
from ledger.core.vocabulary import COMPONENT_COLOURS as COMPONENT_COLOURS
from ledger.core.vocabulary import COMPONENT_LABELS as COMPONENT_LABELS
from ledger.serving.links import relative_board_link

if TYPE_CHECKING:
    from dashboards.filters import Filters

# COMPONENT_LABELS and COMPONENT_COLOURS (imported above): one per component everywhere.

# Human names of the vocabulary's machine names, for every page (tables, charts, captions).
SEGMENT_LABELS = {
    "endpointing": "Endpointing",
    "stt_final": "STT finalisation",
    "llm_ttft": "LLM time to first token",
    "tts_first_frame": "TTS first frame",
    "network_playback": "Network / playback",
    "first_audio": "First audio (total)",
}
DEGRADATION_LABELS = {
    "realtime_to_cascade": "Realtime to cascade",
    "asr_to_dtmf": "ASR to DTMF",
    "tts_filler": "TTS filler",
    "vision_clamp": "Vision clamp",
    "provider_failover": "Provider failover",
}
SAVINGS_LABELS = {
    "llm": "LLM prefix cache",
    "realtime": "Realtime prefix cache",
    "tts": "TTS phrase cache",
    "vision": "Vision embedding cache",
}


def human(value: object, labels: dict[str, str]) -> object:
    """The human name of a machine name; an unknown name reads as itself, capitalised."""
    if not isinstance(value, str):
        return value
    return labels.get(value, value.replace("_", " ").capitalize())


def meter_label(meter: object) -> object:
    """`llm.cached_input_tokens` -> `LLM cached input tokens`: a meter as people name it."""
    if not isinstance(meter, str) or "." not in meter:
        return meter
    component, _, rest = meter.partition(".")
    return f"{COMPONENT_LABELS.get(component, component)} {rest.replace('_', ' ')}"


def segment_list(value: object) -> object:
    """`endpointing,llm_ttft` -> `Endpointing, LLM time to first token`."""
    if not isinstance(value, str):
        return value
    return ", ".join(str(human(part, SEGMENT_LABELS)) for part in value.split(",") if part)


Kind = Literal[
    "text",
    "int",
    "money",
    "share",
    "pct",
    "ms",
    "minutes",
    "bool",
    "number",
    "measure",
    "p_value",
    "link",
    "amount",
]


@dataclass(frozen=True)
class Col:
    source: str
    header: str
    kind: Kind = "text"
    help: str | None = None
    # link: the text a link shows (a regular expression on the URL, see LinkColumn)
    display: str | None = None
    # The column's width: key columns are sized so they are never cut off (issue 27 point 2).
    width: Literal["small", "medium", "large"] | None = None


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
    if kind == "amount":
        # Already rounded (Decimal) by the page, e.g. to add up to a total: shown as it is.
        return series.map(lambda v: None if _missing(v) else float(v)).astype("Float64")
    if kind == "p_value":
        # `< 0.001`, never 0: text, one look with the review's (ledger.core.numbers.p_value).
        return series.map(lambda v: "" if _missing(v) else p_value(v)).astype("string")
    if kind in ("ms", "minutes", "number", "measure"):
        return series.map(lambda v: None if _missing(v) else float(v)).astype("Float64")
    if kind == "int":
        return series.map(lambda v: None if _missing(v) else int(v)).astype("Int64")
    if kind == "bool":
        # A flag with no value is blank, not "None" and not False.
        return series.map(lambda v: None if _missing(v) else bool(v)).astype("boolean")
    if kind == "text" and all(isinstance(v, str) for v in series if not _missing(v)):
        # A text column with gaps shows them blank (the grid would print "None").
        return series.astype("string").fillna("")
    return series


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT


def present(frame: pd.DataFrame, columns: list[Col], currency: str) -> pd.DataFrame:
    """Pick, convert (money half-even to cents, shares to %) and label the columns to show."""
    shown = pd.DataFrame(
        {_header(col, currency): _convert(frame[col.source], col.kind) for col in columns}
    )
    return shown.reset_index(drop=True)


# One look for a number everywhere: thousands separated, places fixed per kind (as the metrics).
NUMBER_FORMATS = {
    "money": "%,.2f",
    "pct": "%,.2f",
    "share": "%,.1f",
    "minutes": "%,.2f",
    "ms": "%,.1f",
    "measure": "%,.2f",
    "int": "%,d",
    "number": "localized",
}


def column_config(columns: list[Col], currency: str, pinned: int = 1, places: int = 4) -> dict:
    """Formats, tooltips, and the first `pinned` (identifying) columns kept in view on scroll."""
    config = {}
    for position, col in enumerate(columns):
        header = _header(col, currency)
        options = {
            "help": col.help,
            "pinned": True if position < pinned else None,
            "width": col.width,
        }
        if col.kind in NUMBER_FORMATS:
            config[header] = st.column_config.NumberColumn(
                header, format=NUMBER_FORMATS[col.kind], **options
            )
        elif col.kind == "amount":
            config[header] = st.column_config.NumberColumn(
                header, format=f"%,.{places}f", **options
            )
        elif col.kind == "link":
            config[header] = st.column_config.LinkColumn(
                header, display_text=col.display, **options
            )
        elif col.kind == "bool":
            config[header] = st.column_config.CheckboxColumn(header, **options)
        else:
            config[header] = st.column_config.Column(header, **options)
    return config


def show_table(
    frame: pd.DataFrame,
    columns: list[Col],
    currency: str,
    *,
    key: str,
    empty: str = "Nothing in the selected period.",
    height: int | Literal["auto"] = "auto",
    pinned: int = 1,
    places: int = 4,
    **dataframe_options: object,
) -> pd.DataFrame | None:
    """Show a sortable table (click a header to sort); say so plainly when it is empty.

    Key columns come first in `columns`; the first `pinned` of them (what identifies a row) stay
    in view when the table scrolls sideways. `places` is the precision of `amount` columns.
    """
    if frame.empty:
        st.caption(empty)
        return None
    shown = present(frame, columns, currency)
    st.dataframe(
        shown,
        hide_index=True,
        column_config=column_config(columns, currency, pinned, places),
        key=key,
        height=height,
        **dataframe_options,
    )
    return shown


def money_series(series: pd.Series) -> pd.Series:
    """Money for a chart axis: the half-even cent value as a float (NaN when unknown)."""
    return _convert(series, "money").astype("float64")


def share_series(series: pd.Series) -> pd.Series:
    """A rate for a chart axis, in percent (NaN when unknown)."""
    return _convert(series, "share").astype("float64")


SESSIONS_PAGE = "sessions"


def board_page_link(page: str, params: dict[str, object]) -> str:
    """A link from one page to another with its filters (ledger.serving.links, the one way to
    build one), relative so it works under any base URL: `sessions?from=…&tenant=…`."""
    return relative_board_link(page, params)


def sessions_link(
    date_from: date,
    date_to: date,
    *,
    tenants: tuple[str, ...] = (),
    scenarios: tuple[str, ...] = (),
    pipelines: tuple[str, ...] = (),
    sort: str | None = None,
    session: str | None = None,
) -> str:
    """A link into the session explorer showing these sessions (the drill-downs of every page).

    Relative, so it works under any base URL: `sessions?from=2025-03-10&tenant=a&to=2025-03-10`.
    """
    if session:
        return board_page_link(SESSIONS_PAGE, {"session": session})
    return board_page_link(
        SESSIONS_PAGE,
        {
            "from": date_from,
            "to": date_to,
            "tenant": list(tenants),
            "scenario": list(scenarios),
            "pipeline": list(pipelines),
            "sort": sort,
        },
    )


def tenant_sessions_links(filters: Filters, tenants: pd.Series) -> list[str]:
    """For each tenant, the link to its sessions under the page's period, scenarios and
    pipelines (the drill-down of every by-tenant table)."""
    return [
        sessions_link(
            filters.date_from,
            filters.date_to,
            tenants=(tenant,),
            scenarios=filters.scenarios,
            pipelines=filters.pipelines,
        )
        for tenant in tenants
    ]


def adding_up(frame: pd.DataFrame, *columns: str, places: int = 2) -> pd.DataFrame:
    """The frame with `<column>_shown`: amounts rounded so the rows add up to the rounded exact
    total (`ledger.core.numbers.round_to_total`), for tables shown next to their total."""
    shown = frame.copy()
    for column in columns:
        values = [None if _missing(v) else v for v in frame[column]]
        shown[f"{column}_shown"] = round_to_total(values, places)
    return shown


def adds_up_note(total: object, currency: str, what: str) -> str:
    """The sentence under a table whose rows add up to a total at display precision."""
    return (
        f"The rows add up to the {what}, {money(None if _missing(total) else total, currency)}: "
        "each is rounded half-even to the cent, and where the rounded rows would not add up the "
        "fewest rows move by 0.01."
    )


# How far over budget a P95 is (P95 / budget) -> the band's name and its cell style.
OVERSHOOT_BANDS = (
    (1.0, "within budget", "background-color: #e6f4ea; color: #1e4620"),
    (1.1, "up to 10% over", "background-color: #fff4ce; color: #5c4400"),
    (1.25, "10–25% over", "background-color: #fddcb5; color: #7a3e00"),
    (
        float("inf"),
        "more than 25% over",
        "background-color: #f9c6c0; color: #8c1d18; font-weight: 600",
    ),
)


def overshoot_band(ratio: object) -> tuple[str, str]:
    """The band of a P95 / budget ratio and its style; none for an unmeasured line."""
    if ratio is None or pd.isna(ratio):
        return "not measured", ""
    for limit, name, style in OVERSHOOT_BANDS:
        if float(ratio) <= limit:
            return name, style
    return OVERSHOOT_BANDS[-1][1], OVERSHOOT_BANDS[-1][2]
