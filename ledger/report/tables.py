"""The review's tables, once, for every format (HTML, Markdown, XLSX).

A cell holds the exact value (Decimal, int, str or None) and its column a kind; each renderer
formats it (money half-even to 2 places). Total rows are sums of the unrounded Decimals.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ledger.alerts.delivery import METRIC_LABELS
from ledger.core.numbers import money, percent, points, rate, shown_change
from ledger.core.vocabulary import COMPONENT_LABELS, COMPONENTS
from ledger.report.restatement import figure_label
from ledger.report.weekly import TenantWeek, WeeklyReview
from ledger.serving.drivers import Mover, headline, movers

HUNDRED = Decimal(100)

# Column kinds: money, rate (4 places), pct, points, int, text.
Cell = Decimal | int | str | None


@dataclass(frozen=True)
class Column:
    title: str
    kind: str = "text"


@dataclass(frozen=True)
class Table:
    key: str  # sheet name / anchor
    title: str
    columns: tuple[Column, ...]
    rows: list[list[Cell]]
    total: list[Cell] | None = None
    note: str = ""


def format_cell(value: Cell, kind: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        # A count in a money column (a restated session count) stays a whole number.
        return f"{value:+,}" if kind.startswith("signed") else f"{value:,}"
    if kind == "money":
        return money(value)  # type: ignore[arg-type]
    if kind == "signed_money":
        return ("+" if value > 0 else "") + money(value)  # type: ignore[operator,arg-type]
    if kind == "rate":
        return rate(value)  # type: ignore[arg-type]
    if kind == "pct":
        return percent(value)  # type: ignore[arg-type]
    if kind == "signed_pct":
        return percent(value, signed=True)  # type: ignore[arg-type]
    if kind == "points":
        return points(value, signed=True)  # type: ignore[arg-type]
    if kind == "int":
        return f"{int(value):,}"  # type: ignore[arg-type]
    return str(value)


def _change_pct(new: Decimal, old: Decimal | None) -> Decimal | None:
    if old is None or old == 0:
        return None
    return HUNDRED * (new - old) / abs(old)


def _margin_points(new: TenantWeek, old: TenantWeek | None) -> Decimal | None:
    if old is None or new.gross_margin_pct is None or old.gross_margin_pct is None:
        return None
    return new.gross_margin_pct - old.gross_margin_pct


def margin_table(review: WeeklyReview) -> Table:
    def row(week: TenantWeek) -> list[Cell]:
        return [
            week.tenant_id,
            int(week["session_count"]),
            week.billable_minutes,
            week["revenue"],
            week["total_cost"],
            week["gross_margin"],
            week.gross_margin_pct,
        ]

    total = review.total
    return Table(
        "margin",
        "Revenue, cost and gross margin per tenant",
        (
            Column("tenant"),
            Column("sessions", "int"),
            Column("billable minutes", "money"),
            Column(f"revenue ({review.currency})", "money"),
            Column(f"total cost ({review.currency})", "money"),
            Column(f"gross margin ({review.currency})", "money"),
            Column("gross margin %", "pct"),
        ),
        [row(w) for w in review.tenants],
        ["total", *row(total)[1:]],
    )


def components_table(review: WeeklyReview) -> Table:
    def row(week: TenantWeek) -> list[Cell]:
        return [week.tenant_id, *(week[f"{c}_cost"] for c in COMPONENTS), week["total_cost"]]

    return Table(
        "cost_by_component",
        f"Cost by component ({review.currency})",
        (Column("tenant"), *(Column(c, "money") for c in COMPONENTS), Column("total", "money")),
        [row(w) for w in review.tenants],
        ["total", *row(review.total)[1:]],
    )


def week_over_week_table(review: WeeklyReview) -> Table:
    def row(week: TenantWeek, before: TenantWeek | None) -> list[Cell]:
        return [
            week.tenant_id,
            None if before is None else before["revenue"],
            week["revenue"],
            _change_pct(week["revenue"], None if before is None else before["revenue"]),
            None if before is None else before["total_cost"],
            week["total_cost"],
            _change_pct(week["total_cost"], None if before is None else before["total_cost"]),
            None if before is None else before.gross_margin_pct,
            week.gross_margin_pct,
            _margin_points(week, before),
        ]

    previous_total = review.previous_total if review.previous else None
    return Table(
        "week_over_week",
        f"Week over week ({review.previous_week} -> {review.iso_week})",
        (
            Column("tenant"),
            Column(f"revenue {review.previous_week}", "money"),
            Column(f"revenue {review.iso_week}", "money"),
            Column("revenue change", "signed_pct"),
            Column(f"cost {review.previous_week}", "money"),
            Column(f"cost {review.iso_week}", "money"),
            Column("cost change", "signed_pct"),
            Column(f"margin % {review.previous_week}", "pct"),
            Column(f"margin % {review.iso_week}", "pct"),
            Column("margin change", "points"),
        ),
        [row(w, review.previous.get(w.tenant_id)) for w in review.tenants],
        ["total", *row(review.total, previous_total)[1:]],
        note="" if review.previous else f"no data for {review.previous_week}",
    )


def waste_savings_table(review: WeeklyReview) -> Table:
    def row(week: TenantWeek) -> list[Cell]:
        return [
            week.tenant_id,
            int(week["interruption_count"]),
            week["interruption_waste_cost"],
            week["llm_cache_savings"],
            week["realtime_cache_savings"],
            week["tts_cache_savings"],
            week["vision_cache_savings"],
            week["cache_savings"],
        ]

    return Table(
        "waste_savings",
        f"Interruption waste and cache savings ({review.currency})",
        (
            Column("tenant"),
            Column("interruptions", "int"),
            Column("interruption waste", "money"),
            Column("LLM prefix cache", "money"),
            Column("realtime prefix cache", "money"),
            Column("TTS phrase cache", "money"),
            Column("vision cache", "money"),
            Column("cache savings", "money"),
        ),
        [row(w) for w in review.tenants],
        ["total", *row(review.total)[1:]],
        note="Waste is cost already counted above, attributed to interrupted output; savings are "
        "cost avoided by caches.",
    )


def anomalies_table(review: WeeklyReview) -> Table:
    rows: list[list[Cell]] = []
    for a in review.anomalies:
        kind = "rate" if a.unit == "currency/min" else "money"
        shown = (
            (lambda v: format_cell(v, "pct"))
            if a.unit == "points"
            else (lambda v, k=kind: format_cell(v, k))
        )
        rows.append(
            [
                a.business_date.isoformat(),
                a.tenant_id,
                METRIC_LABELS.get(a.metric, a.metric),
                a.severity,
                shown(a.value),
                shown(a.expected),
                format_cell(a.abs_change, "points")
                if a.unit == "points"
                else ("+" if a.abs_change > 0 else "") + shown(a.abs_change),
                a.pct_change,
                a.cause,
                a.notification or "-",
            ]
        )
    return Table(
        "anomalies",
        "Cost anomalies of the week",
        (
            Column("date"),
            Column("tenant"),
            Column("metric"),
            Column("severity"),
            Column("value"),
            Column("usual"),
            Column("change"),
            Column("change %", "signed_pct"),
            Column("likely cause"),
            Column("notification"),
        ),
        rows,
        note="" if rows else "No anomalies this week.",
    )


def data_quality_table(review: WeeklyReview) -> Table:
    rows: list[list[Cell]] = [
        [
            w.tenant_id,
            int(w["unpriced_usage_event_count"]),
            int(w["sessions_with_unpriced_usage"]),
            int(w["open_session_count"]),
        ]
        for w in review.tenants
    ]
    total = review.total
    return Table(
        "data_quality",
        "Data quality",
        (
            Column("tenant"),
            Column("unpriced usage events", "int"),
            Column("sessions with unpriced usage", "int"),
            Column("open sessions (no revenue yet)", "int"),
        ),
        rows,
        [
            "total",
            int(total["unpriced_usage_event_count"]),
            int(total["sessions_with_unpriced_usage"]),
            int(total["open_session_count"]),
        ],
        note=(
            f"{review.days_closed} of 7 days of the week are closed in the data. Unpriced usage "
            "adds nothing to cost (it has no price in the rate card): fix the rate card and "
            "rebuild."
        ),
    )


def quarantine_table(review: WeeklyReview) -> Table:
    rows: list[list[Cell]] = [[reason, count] for reason, count in review.quarantine]
    return Table(
        "quarantine",
        "Quarantined rows dated in the week",
        (Column("reason"), Column("rows", "int")),
        rows,
        ["total", sum(count for _, count in review.quarantine)] if rows else None,
        note=f"{review.quarantine_undated} quarantined rows in all have no readable occurred_at "
        "(malformed or missing) and cannot be dated.",
    )


def restatements_table(review: WeeklyReview) -> Table:
    # The change is the difference of the amounts shown (1.89 -> 1.97 is +0.08), exactly.
    rows: list[list[Cell]] = [
        [r.iso_week, r.tenant_id, figure_label(r.figure), r.old, r.new, shown_change(r.new, r.old)]
        if r.figure != "session_count"
        else [r.iso_week, r.tenant_id, "sessions", int(r.old), int(r.new), int(r.new - r.old)]
        for r in review.restatements
    ]
    return Table(
        "restatements",
        "Restatements of weeks already reported",
        (
            Column("week"),
            Column("tenant"),
            Column("figure"),
            Column("reported", "money"),
            Column("now", "money"),
            Column("change", "signed_money"),
        ),
        rows,
        note="Late events changed these figures after they were reported."
        if rows
        else "No reported week has changed since it was reported.",
    )


DRIVER_DIMENSIONS = ("tenant_id", "component", "provider", "model")


def _effects(mover: Mover) -> list[Cell]:
    return [mover.volume, mover.price, mover.mix]


def drivers_table(review: WeeklyReview) -> Table:
    """The cost change against the week before split into volume, price and mix, per tenant,
    component and model: the top movers and the rest, adding up to the total as shown."""
    rows: list[list[Cell]] = []
    for mover in movers(review.drivers, DRIVER_DIMENSIONS):
        name = dict(zip(DRIVER_DIMENSIONS, mover.name, strict=False))
        model = "/".join(v for v in (name.get("provider"), name.get("model")) if v)
        rows.append(
            [name.get("tenant_id"), COMPONENT_LABELS.get(name.get("component", ""),
             name.get("component")), model or None, mover.before, mover.now, mover.change,
             *_effects(mover)]
        )  # fmt: skip
    whole = headline(review.drivers) if review.drivers else None
    total = (
        None
        if whole is None
        else ["total", None, None, whole.before, whole.now, whole.change, *_effects(whole)]
    )
    return Table(
        "cost_drivers",
        f"What drove the cost change ({review.previous_week} -> {review.iso_week})",
        (
            Column("tenant"),
            Column("component"),
            Column("provider/model"),
            Column(f"cost {review.previous_week}", "money"),
            Column(f"cost {review.iso_week}", "money"),
            Column("change", "signed_money"),
            Column("volume", "signed_money"),
            Column("price", "signed_money"),
            Column("mix", "signed_money"),
        ),
        rows,
        total,
        note="Volume: the change of billable minutes at the week before's usage per minute and "
        "prices; price: the rate-card unit prices' change on this week's quantities; mix: the "
        "rest (usage per minute, model mix, cache hits, new and gone tenants or models). The "
        "parts add up to the change exactly; shown to the cent, rows and parts are rounded to "
        "add up to the total (the change shown is the cost shown minus the cost shown before).",
    )


def reconciliation_table(review: WeeklyReview) -> Table:
    rows: list[list[Cell]] = [
        [r.provider, r.component, r.priced_cost, r.reported_cost, r.difference,
         r.difference_pct, r.days, r.drifting_days]
        for r in review.reconciliation
    ]  # fmt: skip
    drifting = sum(r.drifting_days for r in review.reconciliation)
    if not rows:
        note = "No provider bill or reported cost to reconcile this week."
    elif drifting:
        note = (
            f"{drifting} provider-days billed more than the tolerance (2% and at least 1 "
            f"{review.currency}) away from the rate card: rate card drift, check those prices."
        )
    else:
        note = "Every reconciled provider-day is within the tolerance."
    return Table(
        "reconciliation",
        "Reconciliation with provider bills",
        (
            Column("provider"),
            Column("component"),
            Column("priced", "money"),
            Column("billed", "money"),
            Column("difference", "signed_money"),
            Column("difference %", "signed_pct"),
            Column("days", "int"),
            Column("days over tolerance", "int"),
        ),
        rows,
        note=note,
    )


def capacity_table(review: WeeklyReview) -> Table:
    rows: list[list[Cell]] = [
        [c.scope, c.llm_tokens_per_second_peak, c.llm_tokens_per_second_p95,
         c.llm_peak_change_pct, c.encoder_images_per_second_peak,
         c.encoder_images_per_second_p95, c.peak_concurrent_paths, c.vision_cache_hit_pct,
         c.vision_cache_gib, c.encoder_images_per_second_saved_per_10_points]
        for c in review.capacity
    ]  # fmt: skip
    return Table(
        "capacity",
        "Pool capacity",
        (
            Column("pool load of"),
            Column("LLM tokens/s, peak minute", "rate"),
            Column("LLM tokens/s, P95 of hourly peaks", "rate"),
            Column("LLM peak vs week before", "signed_pct"),
            Column("encoder images/s, peak minute", "rate"),
            Column("encoder images/s, P95 of hourly peaks", "rate"),
            Column("concurrent paths, peak", "int"),
            Column("vision cache hit rate", "pct"),
            Column("vision cache size (GiB)", "rate"),
            Column("encoder images/s saved per 10 points of hit rate", "rate"),
        ),
        rows,
        note="LLM load is uncached input + output tokens; the encoder's is images that missed "
        "the embedding cache. Cache size = hot-set images x image tokens per image x embedding "
        "dimensions x bytes per value (data/reference/planning.yaml). Paths are per tenant only: "
        "tenant peaks do not add up."
        if rows
        else "No pool load this week.",
    )
