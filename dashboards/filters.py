"""The sidebar every page shares: date range, tenant, scenario, pipeline, and the publication.

The entry file draws the sidebar on every run before the page runs, so a choice made on one page
holds on the next. Pages read the result with `page_context()`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta

import streamlit as st

from dashboards.connection import Publication

DEFAULT_DAYS = 7
_CONTEXT_KEY = "_boards_context"


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
        parts = [f"{self.date_from:%Y-%m-%d} to {self.date_to:%Y-%m-%d} ({self.days} days)"]
        for label, values in (
            ("tenants", self.tenants),
            ("scenarios", self.scenarios),
            ("pipelines", self.pipelines),
        ):
            parts.append(f"{label}: {', '.join(values) if values else 'all'}")
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


def default_period(first: date, last: date, days: int = DEFAULT_DAYS) -> tuple[date, date]:
    """The last `days` days with data (fewer when the ledger is younger)."""
    return max(first, last - timedelta(days=days - 1)), last


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
    period = default_period(publication.first_date, publication.last_date)
    with st.sidebar:
        st.header("Filters")
        picked = st.date_input(
            "Business dates",
            value=period,
            key="filter_dates",
            help=f"Session start dates in {publication.timezone}.",
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
            value=False,
            key="filter_include_replays",
            help="Copies written by `ledger replay` to load-test the pipeline: their cost is the "
            "load, their revenue is always 0. Left out by default.",
        )
        st.divider()
        st.caption(publication_line(publication))
    date_from, date_to = _dates(picked, period)
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
