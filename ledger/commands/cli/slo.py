"""`ledger budgets`: latency SLO and spend budget alerts, budget reviews, forecast accuracy."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from ledger.alerts.budgets import run_budget_alerts
from ledger.commands.budget_review import review_budgets, review_lines, review_markdown
from ledger.commands.cli.app import console, load_settings
from ledger.finops.spend_budgets import forecast_accuracy
from ledger.reference import ReferenceDataError
from ledger.serving.published_copy import NotPublishedError, open_published_with_ops


@click.group()
def budgets() -> None:
    """Latency SLOs and spend budgets: alerts, reviews of a proposed budgets file."""


@budgets.command("alerts")
def budgets_alerts() -> None:
    """Evaluate the latency SLO burn rates and spend budgets on the published marts and deliver
    the alerts (every build does this as its last step).

    SLO alerts go to the owner team's webhook (LEDGER_OWNER_WEBHOOKS: `audio=URL inference=URL`),
    spend alerts and alerts of a team without one where the cost anomalies go. A webhook URL that
    cannot be used is named in a line and its alerts are kept for it; the others go out.
    """
    try:
        lines = run_budget_alerts(
            load_settings(),
            echo=lambda text: console.print(f"alert: {text}", highlight=False, markup=False),
        )
    except NotPublishedError as exc:
        raise click.ClickException(str(exc)) from None
    for line in lines:
        console.print(line, highlight=False, markup=False)


@budgets.command("review")
@click.argument(
    "proposed", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("--days", default=28, show_default=True, type=click.IntRange(1, 366))
@click.option(
    "--from-shadow",
    "candidate",
    help="Propose a shadow candidate's measured endpointing change instead of a file.",
)
@click.option(
    "--markdown", type=click.Path(dir_okay=False, path_type=Path), help="Also write Markdown here."
)
def budgets_review(
    proposed: Path | None, days: int, candidate: str | None, markdown: Path | None
) -> None:
    """Compare a proposed latency_budgets.yaml with the current one on the recorded turns of the
    last --days days: breaching share and error budget left per SLO, whose slack it consumes."""
    if (proposed is None) == (candidate is None):
        raise click.UsageError("give a PROPOSED file or --from-shadow CANDIDATE (one of them)")
    try:
        review = review_budgets(load_settings(), proposed, days=days, shadow_candidate=candidate)
    except (ReferenceDataError, NotPublishedError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    for line in review_lines(review):
        console.print(line, highlight=False, markup=False)
    if markdown is not None:
        markdown.write_text(review_markdown(review), encoding="utf-8")
        console.print(f"markdown: {markdown}", highlight=False, markup=False)


@budgets.command("forecast-accuracy")
@click.option("--month", required=True, help="The month to measure, YYYY-MM (a complete month).")
def budgets_forecast_accuracy(month: str) -> None:
    """The spend forecast made on days 10, 15 and 20 of a month against its actual spend, per
    tenant (the benchmark in docs/benchmarks.md)."""
    try:
        first = date.fromisoformat(f"{month}-01")
    except ValueError as exc:
        raise click.UsageError(f"--month takes YYYY-MM, got {month!r}") from exc
    with open_published_with_ops(load_settings()) as con:
        rows = forecast_accuracy(con, first)
    console.print("tenant | day | forecast | actual | error % | actual inside the interval")
    for tenant, day, forecast, actual, error, inside in rows:
        console.print(
            f"{tenant} | {day} | {forecast:.2f} | {actual:.2f} | {error:+.1f} | "
            f"{'yes' if inside else 'no'}",
            highlight=False,
        )
