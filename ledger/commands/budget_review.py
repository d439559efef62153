"""`ledger budgets review PROPOSED.yaml` (SPEC 13): a proposed latency budgets file against the
current one on recorded traffic, for the teams to review before it is merged.

Per SLO (profile x segment x tenant, first audio included) over the last `days` days of recorded
turns (ending at the newest one; replays left out): the share of turns that breach under each
file and the error budget that would remain (1 - bad / ((1 - objective) x turns)). Per profile
(and tenant override): whose slack the change consumes, the five segment budgets against the
first-audio budget they add up to: a segment that grows takes the slack under first audio first,
then (once the segments add up to more than first audio) the other teams' margin.

`--from-shadow CANDIDATE` makes the proposal from a shadow comparison (SPEC 11): the candidate's
measured endpointing change (the median change of its newest ISO week, weighted by compared turns,
rounded to the ms) is added to every endpointing budget, and to the recorded endpointing and first
audio durations the proposal is judged on: what switching to the candidate would do to the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import duckdb
import pyarrow as pa

from ledger.contract.events import SEGMENTS
from ledger.core.settings import Settings
from ledger.escaping import markdown
from ledger.reference import ReferenceDataError, load_reference
from ledger.reference.latency import load_latency_budgets
from ledger.reference.models import LatencyBudgetRow
from ledger.reference.rules import FIRST_AUDIO
from ledger.serving.published_copy import open_published_with_ops

ALL_SEGMENTS = (*SEGMENTS, FIRST_AUDIO)


@dataclass(frozen=True)
class SloChange:
    profile: str
    tenant_id: str
    segment: str
    owner: str | None
    turns: int
    current_budget_ms: int
    proposed_budget_ms: int
    current_objective: Decimal
    proposed_objective: Decimal
    current_bad: int
    proposed_bad: int

    @property
    def changed(self) -> bool:
        return (self.current_budget_ms, self.current_objective, self.current_bad) != (
            self.proposed_budget_ms,
            self.proposed_objective,
            self.proposed_bad,
        )

    def breach_pct(self, proposed: bool) -> Decimal:
        bad = self.proposed_bad if proposed else self.current_bad
        return Decimal(100) * bad / self.turns

    def remaining_pct(self, proposed: bool) -> Decimal:
        bad, objective = (
            (self.proposed_bad, self.proposed_objective)
            if proposed
            else (self.current_bad, self.current_objective)
        )
        return Decimal(100) * (1 - bad / ((1 - objective) * self.turns))


@dataclass(frozen=True)
class SlackChange:
    profile: str
    tenant_id: str | None  # None: the profile's defaults
    first_audio_current: int
    first_audio_proposed: int
    segments_current: int
    segments_proposed: int
    changes: tuple[tuple[str, str | None, int], ...]  # (segment, owner, proposed - current ms)
    others: tuple[tuple[str, str | None, int], ...]  # unchanged segments (segment, owner, ms)

    @property
    def slack_current(self) -> int:
        return self.first_audio_current - self.segments_current

    @property
    def slack_proposed(self) -> int:
        return self.first_audio_proposed - self.segments_proposed

    def describe(self, written: Callable[[object], str] = str) -> str:
        """The slack's change in one sentence; `written` turns each name from the reference data
        (profile, tenant, owner) into the text of the medium it goes to (ledger.escaping)."""
        where = written(self.profile) + (
            f" for {written(self.tenant_id)}" if self.tenant_id else ""
        )
        changes = ", ".join(
            f"{segment} ({written(owner) if owner else 'no owner'}) {delta:+d} ms"
            for segment, owner, delta in self.changes
        )
        if self.first_audio_proposed != self.first_audio_current:
            changes += (
                f"{', ' if changes else ''}first audio "
                f"{self.first_audio_proposed - self.first_audio_current:+d} ms"
            )
        text = (
            f"{where}: {changes}; slack under the first-audio budget "
            f"({self.first_audio_proposed} ms) {self.slack_current} -> {self.slack_proposed} ms"
        )
        if self.slack_proposed < 0:
            owners = sorted(
                {written(owner) if owner else "no owner" for _, owner, _ in self.others}
            )
            text += (
                f": the segments now add up to {-self.slack_proposed} ms more than first audio, "
                f"margin taken from {', '.join(owners)} (their segments, "
                f"{', '.join(f'{s} {ms} ms' for s, _, ms in self.others)}, or the first-audio "
                "budget must give it back)"
            )
        elif self.slack_proposed < self.slack_current:
            text += f" ({self.slack_current - self.slack_proposed} ms of slack consumed)"
        return text


@dataclass
class BudgetReview:
    proposed_file: str
    days: int
    window_from: object
    window_to: object
    shadow: tuple[str, int] | None  # (candidate, endpointing change in ms)
    slos: list[SloChange] = field(default_factory=list)
    slack: list[SlackChange] = field(default_factory=list)

    @property
    def changed(self) -> list[SloChange]:
        return [slo for slo in self.slos if slo.changed]


def _rows_table(rows: tuple[LatencyBudgetRow, ...]) -> pa.Table:
    return pa.table(
        {
            "scenario": [r.scenario for r in rows],
            "tenant_id": [r.tenant_id for r in rows],
            "segment": [r.segment for r in rows],
            "budget_ms": [r.budget_ms for r in rows],
            "owner": [r.owner for r in rows],
            "profile": [r.profile for r in rows],
            "objective": pa.array([r.objective for r in rows], pa.decimal128(5, 4)),
        }
    )


def _shadow_change(con: duckdb.DuckDBPyConnection, candidate: str) -> int:
    row = con.execute(
        """
        select sum(endpointing_delta_median_ms * compared_turns) / sum(compared_turns)
        from marts.fct_shadow_comparison_weekly
        where candidate = ? and kind = 'endpointing' and compared_turns > 0
            and iso_week = (
                select max(iso_week) from marts.fct_shadow_comparison_weekly where candidate = ?
            )
        """,
        [candidate, candidate],
    ).fetchall()[0]
    if row[0] is None:
        raise ValueError(
            f"no shadow comparison of candidate {candidate!r} in the published marts "
            "(fct_shadow_comparison_weekly); send its turn.shadow events and build"
        )
    return int(Decimal(repr(row[0])).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _shifted(rows: tuple[LatencyBudgetRow, ...], change: int) -> tuple[LatencyBudgetRow, ...]:
    return tuple(
        row.model_copy(update={"budget_ms": row.budget_ms + change})
        if row.segment == "endpointing"
        else row
        for row in rows
    )


_COUNTS = """
with
turns as (
    select * from marts.fct_turn_latency where not is_replay
),
newest as (select max(turn_started_at) as newest from turns),
windowed as (
    select turns.* from turns cross join newest
    where turns.turn_started_at > newest.newest - to_days(cast(? as integer))
),
durations as (
    unpivot windowed
    on endpointing_ms as 'endpointing', stt_final_ms as 'stt_final', llm_ttft_ms as 'llm_ttft',
        tts_first_frame_ms as 'tts_first_frame', network_playback_ms as 'network_playback',
        first_audio_ms as 'first_audio'
    into name segment value duration_ms
),
judged as (
    select
        durations.tenant_id, durations.segment,
        coalesce(ct.profile, cd.profile) as profile,
        coalesce(ct.owner, cd.owner) as owner,
        coalesce(ct.budget_ms, cd.budget_ms) as current_budget_ms,
        coalesce(pt.budget_ms, pd.budget_ms) as proposed_budget_ms,
        coalesce(ct.objective, cd.objective) as current_objective,
        coalesce(pt.objective, pd.objective) as proposed_objective,
        durations.duration_ms > coalesce(ct.budget_ms, cd.budget_ms) as current_bad,
        durations.duration_ms
            + case when durations.segment in ('endpointing', 'first_audio') then ? else 0 end
            > coalesce(pt.budget_ms, pd.budget_ms) as proposed_bad,
    from durations
    left join current_budgets as cd
        on cd.tenant_id is null and durations.scenario = cd.scenario
        and durations.segment = cd.segment
    left join current_budgets as ct
        on durations.tenant_id = ct.tenant_id and durations.scenario = ct.scenario
        and durations.segment = ct.segment
    left join proposed_budgets as pd
        on pd.tenant_id is null and durations.scenario = pd.scenario
        and durations.segment = pd.segment
    left join proposed_budgets as pt
        on durations.tenant_id = pt.tenant_id and durations.scenario = pt.scenario
        and durations.segment = pt.segment
)
select
    profile, tenant_id, segment, min(owner), count(*),
    min(current_budget_ms), max(proposed_budget_ms), min(current_objective),
    min(proposed_objective), count(*) filter (where current_bad),
    count(*) filter (where proposed_bad)
from judged
group by profile, tenant_id, segment
order by profile, tenant_id, list_position(?, segment)
"""


def _slack(
    current: tuple[LatencyBudgetRow, ...], proposed: tuple[LatencyBudgetRow, ...]
) -> list[SlackChange]:
    def by_profile(rows: tuple[LatencyBudgetRow, ...]) -> dict:
        grouped: dict[tuple[str, str | None], dict[str, LatencyBudgetRow]] = {}
        for row in rows:
            grouped.setdefault((row.profile, row.tenant_id), {}).setdefault(row.segment, row)
        return grouped

    now, then = by_profile(current), by_profile(proposed)
    result = []
    for key in sorted(now, key=lambda k: (k[0], k[1] or "")):
        old, new = now[key], then.get(key)
        if new is None:
            continue
        deltas = tuple(
            (s, new[s].owner, new[s].budget_ms - old[s].budget_ms)
            for s in SEGMENTS
            if new[s].budget_ms != old[s].budget_ms
        )
        if not deltas and new[FIRST_AUDIO].budget_ms == old[FIRST_AUDIO].budget_ms:
            continue
        result.append(
            SlackChange(
                key[0],
                key[1],
                old[FIRST_AUDIO].budget_ms,
                new[FIRST_AUDIO].budget_ms,
                sum(old[s].budget_ms for s in SEGMENTS),
                sum(new[s].budget_ms for s in SEGMENTS),
                deltas,
                tuple(
                    (s, new[s].owner, new[s].budget_ms)
                    for s in SEGMENTS
                    if new[s].budget_ms == old[s].budget_ms
                ),
            )
        )
    return result


def review_budgets(
    settings: Settings,
    proposed_path: Path | None,
    *,
    days: int = 28,
    shadow_candidate: str | None = None,
) -> BudgetReview:
    """Compare `proposed_path` (None with a shadow candidate: the current file) with the current
    budgets; raises ReferenceDataError for a proposal that breaks the file's rules."""
    current = load_reference(settings.reference_dir, settings.reporting_currency).latency_budgets
    if proposed_path is not None:
        _, proposed, problems = load_latency_budgets(proposed_path.name, proposed_path.read_bytes())
        if problems:
            raise ReferenceDataError(proposed_path.parent, problems)
    else:
        proposed = current
    with open_published_with_ops(settings) as con:
        change = _shadow_change(con, shadow_candidate) if shadow_candidate else 0
        proposed = _shifted(proposed, change) if change else proposed
        con.register("current_budgets", _rows_table(current))
        con.register("proposed_budgets", _rows_table(proposed))
        window = con.execute(
            "select max(turn_started_at) - to_days(cast(? as integer)), max(turn_started_at) "
            "from marts.fct_turn_latency where not is_replay",
            [days],
        ).fetchall()[0]
        rows = con.execute(_COUNTS, [days, change, list(ALL_SEGMENTS)]).fetchall()
    review = BudgetReview(
        proposed_file=str(proposed_path)
        if proposed_path
        else f"shadow candidate {shadow_candidate}",
        days=days,
        window_from=window[0],
        window_to=window[1],
        shadow=(shadow_candidate, change) if shadow_candidate else None,
        slos=[SloChange(*row) for row in rows if row[0] is not None],
    )
    review.slack = _slack(current, proposed)
    return review


def _pct(value: Decimal) -> str:
    return f"{value.quantize(Decimal('0.1'), rounding=ROUND_HALF_EVEN)}%"


def review_lines(review: BudgetReview) -> list[str]:
    """What the terminal shows (the Markdown says the same as tables)."""
    lines = [
        f"budget review of {review.proposed_file} on the turns of "
        f"{review.window_from:%Y-%m-%d %H:%M} to {review.window_to:%Y-%m-%d %H:%M} UTC "
        f"({review.days} days)"
    ]
    if review.shadow:
        lines.append(
            f"shadow candidate {review.shadow[0]}: endpointing {review.shadow[1]:+d} ms, added "
            "to every endpointing budget and to the recorded endpointing and first audio"
        )
    lines += ["slack: " + slack.describe() for slack in review.slack] or ["slack: unchanged"]
    if not review.changed:
        lines.append("no SLO changes: every turn breaches (or not) as it did")
    for slo in review.changed:
        lines.append(
            f"{slo.tenant_id} {slo.profile} {slo.segment} ({slo.owner or 'no owner'}): "
            f"budget {slo.current_budget_ms} -> {slo.proposed_budget_ms} ms, breaching "
            f"{_pct(slo.breach_pct(False))} -> {_pct(slo.breach_pct(True))} of {slo.turns} turns, "
            f"error budget left {_pct(slo.remaining_pct(False))} -> "
            f"{_pct(slo.remaining_pct(True))}"
        )
    return lines


def review_markdown(review: BudgetReview) -> str:
    lines = [f"# Latency budget review: {review.proposed_file}", ""]
    lines.append(
        f"Recorded turns of {review.window_from:%Y-%m-%d %H:%M} to "
        f"{review.window_to:%Y-%m-%d %H:%M} UTC ({review.days} days), replays left out."
    )
    if review.shadow:
        lines.append(
            f"The proposal is shadow candidate {markdown.escape(review.shadow[0])}'s measured "
            f"endpointing change, {review.shadow[1]:+d} ms, on every endpointing budget and "
            "recorded duration."
        )
    lines += ["", "## Whose slack the change consumes", ""]
    lines += [f"- {slack.describe(markdown.escape)}" for slack in review.slack] or ["- unchanged"]
    lines += [
        "",
        "## SLOs that change",
        "",
        "| tenant | profile | segment | owner | turns | budget (ms) | breaching | error budget left |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for slo in review.changed:
        lines.append(
            f"| {markdown.escape(slo.tenant_id)} | {markdown.escape(slo.profile)} | {slo.segment} | "
            f"{markdown.escape(slo.owner) if slo.owner else '-'} | "
            f"{slo.turns} | {slo.current_budget_ms} -> {slo.proposed_budget_ms} | "
            f"{_pct(slo.breach_pct(False))} -> {_pct(slo.breach_pct(True))} | "
            f"{_pct(slo.remaining_pct(False))} -> {_pct(slo.remaining_pct(True))} |"
        )
    return "\n".join(lines) + "\n"
