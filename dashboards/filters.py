"""The sidebar every page shares: period, tenant, scenario, pipeline, and the publication.

The entry file draws the sidebar on every run before the page runs, so a choice made on one page
holds on the next. Pages read the result with `page_context()`.

The filters live in the URL too (`st.query_params`, the names of `ledger.serving.links`
FILTER_PARAMS): a session's first run takes them from the link it was opened with, and every run
writes the current ones back, so the address in the browser reproduces the view. The default
period is the last complete ISO week of the data, the weekly review's week.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta

import streamlit as st

from dashboards.connection import Publication
from ledger.escaping.streamlit_markdown import escape_all
from ledger.serving.links import FILTER_PARAMS

_CONTEXT_KEY = "_boards_context"
_LINK_READ_KEY = "_boards_link_read"
# Period presets, as the URL names them; every one is counted back from the ledger's newest
# business date (the data's "today"), so a link to "last-week" follows the data.
PRESETS = {
    "last-week": "Last complete ISO week",
    "this-week": "This week",
    "month-to-date": "Month to date",
    "last-month": "Last month",
    "custom": "Custom dates",
}
DEFAULT_PRESET = "last-week"
CUSTOM = "custom"


@dataclass(frozen=True)
class Filters:
    date_from: date
    date_to: date
    tenants: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    pipelines: tuple[str, ...] = ()
    # Replayed copies (`ledger replay`, SPEC 11) are load, never revenue: out unless asked for.
    include_replays: bool = False

    @property
    def days(self) -> int:
        return (self.date_to - self.date_from).days + 1

    def previous(self) -> Filters:
        """The period of the same length just before this one, same tenants/scenarios/pipelines."""
        return replace(
            self,
            date_from=self.date_from - timedelta(days=self.days),
            date_to=self.date_from - timedelta(days=1),
        )

    def describe(self) -> str:
        """The filters in one line of Markdown (their values escaped: they come from the URL and
        the data)."""
        parts = [f"{self.date_from:%Y-%m-%d} to {self.date_to:%Y-%m-%d} ({self.days} days)"]
        for label, values in (
            ("tenants", self.tenants),
            ("scenarios", self.scenarios),
            ("pipelines", self.pipelines),
        ):
            parts.append(f"{label}: {escape_all(values) if values else 'all'}")
        if self.include_replays:
            parts.append("replayed sessions included")
        return " · ".join(parts)


@dataclass(frozen=True)
class PageContext:
    publication: Publication
    filters: Filters

    @property
    def version(self) -> str:
        return self.publication.version

    @property
    def currency(self) -> str:
        return self.publication.currency


def preset_period(preset: str, first: date, last: date) -> tuple[date, date]:
    """The dates of a period preset in a ledger holding `first` to `last`.

    last-week: the newest Monday-to-Sunday week ending on or before `last` (the whole ledger
    when it holds no complete week); this-week: from that week's Monday to `last`;
    month-to-date: from the 1st of `last`'s month; last-month: the calendar month before it.
    """
    if preset == "this-week":
        return last - timedelta(days=last.weekday()), last
    if preset == "month-to-date":
        return last.replace(day=1), last
    if preset == "last-month":
        end = last.replace(day=1) - timedelta(days=1)
        return end.replace(day=1), end
    if preset != DEFAULT_PRESET:
        raise ValueError(f"no period preset {preset!r}; the presets are {', '.join(PRESETS)}")
    sunday = last - timedelta(days=(last.weekday() + 1) % 7)
    if sunday - timedelta(days=6) < first:
        return first, last
    return sunday - timedelta(days=6), sunday


def default_period(first: date, last: date) -> tuple[date, date]:
    """The period a reader sees first: the last complete ISO week, as the weekly review."""
    return preset_period(DEFAULT_PRESET, first, last)


def _read_link(publication: Publication) -> None:
    """On a session's first run, the filters its link carries become the widgets' state."""
    if st.session_state.get(_LINK_READ_KEY):
        return
    st.session_state[_LINK_READ_KEY] = True
    params = {key: st.query_params.get_all(key) for key in st.query_params}
    preset = (params.get("period") or [None])[0]
    try:
        linked = tuple(
            date.fromisoformat((params.get(key) or params.get("from"))[0]) for key in ("from", "to")
        )
    except (TypeError, ValueError):
        linked = None
    if preset in PRESETS and preset != CUSTOM:
        st.session_state["filter_period"] = preset
    elif linked is not None:
        st.session_state["filter_period"] = CUSTOM
        st.session_state["filter_dates"] = (min(linked), max(linked))
    for key, name, choices in (
        ("filter_tenants", "tenant", publication.tenants),
        ("filter_scenarios", "scenario", publication.scenarios),
        ("filter_pipelines", "pipeline", publication.pipelines),
    ):
        if name in params:
            st.session_state[key] = [value for value in params[name] if value in choices]
    if "replays" in params:
        st.session_state["filter_include_replays"] = params["replays"][0] in ("1", "true")


def _dates_picked() -> None:
    st.session_state["filter_period"] = CUSTOM


def _write_link(preset: str, filters: Filters) -> None:
    """The current filters into the URL (only the filters' own parameters: a page's own, such
    as the explorer's `session`, stay)."""
    wanted: dict[str, list[str]] = {
        "tenant": list(filters.tenants),
        "scenario": list(filters.scenarios),
        "pipeline": list(filters.pipelines),
        "replays": ["1"] if filters.include_replays else [],
    }
    if preset == CUSTOM:
        wanted |= {"from": [f"{filters.date_from}"], "to": [f"{filters.date_to}"]}
    else:
        wanted["period"] = [preset]
    for name in FILTER_PARAMS:
        values = wanted.get(name, [])
        if st.query_params.get_all(name) == values:
            continue
        if values:
            st.query_params[name] = values
        else:
            del st.query_params[name]


def _dates(value: object, fallback: tuple[date, date]) -> tuple[date, date]:
    # While a person is picking a range the widget holds one date; read it as a one-day range.
    if isinstance(value, (tuple, list)):
        picked = [v for v in value if v is not None]
        if len(picked) == 2:
            return min(picked), max(picked)
        if len(picked) == 1:
            return picked[0], picked[0]
        return fallback
    if isinstance(value, date):
        return value, value
    return fallback


def render_sidebar(publication: Publication) -> PageContext:
    """Draw the filters and the publication line; remember them for the page about to run."""
    _read_link(publication)
    first, last = publication.first_date, publication.last_date
    preset = st.session_state.setdefault("filter_period", DEFAULT_PRESET)
    if preset != CUSTOM:
        # A preset follows the data: a new publish moves its dates.
        st.session_state["filter_dates"] = preset_period(preset, first, last)
    period = st.session_state.setdefault("filter_dates", default_period(first, last))
    with st.sidebar:
        st.header("Filters")
        preset = st.selectbox(
            "Period",
            list(PRESETS),
            format_func=PRESETS.get,
            key="filter_period",
            help=f"Counted back from the newest business date with data ({last:%Y-%m-%d}); "
            "the last complete ISO week is the weekly review's.",
        )
        picked = st.date_input(
            "Business dates",
            key="filter_dates",
            on_change=_dates_picked,
            help=f"Session start dates in {publication.timezone}. Picking dates makes the "
            "period custom.",
        )
        tenants = st.multiselect(
            "Tenant", list(publication.tenants), key="filter_tenants", placeholder="All tenants"
        )
        scenarios = st.multiselect(
            "Scenario",
            list(publication.scenarios),
            key="filter_scenarios",
            placeholder="All scenarios",
        )
        pipelines = st.multiselect(
            "Pipeline",
            list(publication.pipelines),
            key="filter_pipelines",
            placeholder="All pipelines",
        )
        include_replays = st.toggle(
            "Include replayed sessions",
            key="filter_include_replays",
            help="Copies written by `ledger replay` to load-test the pipeline: their cost is the "
            "load, their revenue is always 0. Left out by default.",
        )
        st.divider()
        st.caption(publication_line(publication))
    date_from, date_to = _dates(picked, _dates(period, (first, last)))
    context = PageContext(
        publication,
        Filters(
            date_from,
            date_to,
            tuple(tenants),
            tuple(scenarios),
            tuple(pipelines),
            include_replays=bool(include_replays),
        ),
    )
    st.session_state[_CONTEXT_KEY] = context
    _write_link(preset, context.filters)
    return context


def publication_line(publication: Publication) -> str:
    newest = (
        f"{publication.newest_event_at:%Y-%m-%d %H:%M:%S} UTC"
        if publication.newest_event_at
        else "none"
    )
    return (
        f"Published copy of {publication.published_at:%Y-%m-%d %H:%M:%S} UTC · "
        f"newest event {newest} · {publication.events:,} events · "
        f"amounts in {publication.currency}, dates in {publication.timezone}"
    )


def page_context() -> PageContext:
    return st.session_state[_CONTEXT_KEY]


def page_header(title: str, context: PageContext, intro: str | None = None) -> None:
    st.title(title)
    if intro:
        st.write(intro)
    st.caption(f"{context.filters.describe()} · {publication_line(context.publication)}")
    note = replay_note(context)
    if note:
        st.caption(note)


def replay_note(context: PageContext) -> str | None:
    """What the page says when the published copy holds replayed sessions and they are left out."""
    replays = context.publication.replay_sessions
    if not replays or context.filters.include_replays:
        return None
    return (
        f"The published copy holds {replays:,} replayed session{'s' if replays != 1 else ''} "
        "(`ledger replay` copies, never revenue): left out of the figures here unless the "
        "sidebar toggle includes them. Pool capacity counts them always: they are load."
    )


def explain_empty(path: str) -> None:
    """What to do when there is nothing to show yet (instead of an error)."""
    st.title("Voice session cost ledger")
    st.info(
        "No ledger data has been published yet, so there is nothing to show.\n\n"
        "To load data, run from the repository:\n\n"
        "- `make demo` — simulate a month of traffic, build everything and serve these boards; or\n"
        "- `ledger simulate` (or drop contract files into the landing folder), then "
        "`ledger build`.\n\n"
        f"The boards read the published copy `{path}`, which each successful build replaces. "
        "Reload this page when the build has finished."
    )
