"""`ledger rates` and `reconcile`: rate cards from a price catalogue, bills against the ledger."""

from __future__ import annotations

from pathlib import Path

import click

from ledger.commands.cli.app import console, load_settings
from ledger.finops.provider_costs import import_provider_costs
from ledger.finops.rates import (
    RatesError,
    alias_csv_lines,
    apply_proposal,
    check_rates,
    describe_proposal,
    propose_aliases,
    propose_rates,
    write_proposal,
)
from ledger.reference import ReferenceDataError


@click.group()
def rates() -> None:
    """Rate card upkeep: proposals from a maintained price catalogue, gaps in use."""


@rates.command("import")
@click.option(
    "--proposal",
    type=click.Path(path_type=Path),
    help="Proposal file (default: LEDGER_HOME/rates/rate_card_proposal.csv).",
)
@click.option(
    "--effective-from",
    type=click.DateTime(["%Y-%m-%d"]),
    help="First day of the proposed prices (default: today for models already on the rate "
    "card, first use for the others).",
)
@click.option("--apply", "apply_", is_flag=True, help="Merge the reviewed proposal file.")
def rates_import(proposal: Path | None, effective_from, apply_: bool) -> None:
    """Propose rate-card rows for the ASR, LLM, TTS and realtime models in use (by their
    rate-card names, aliases applied) from genai-prices (tokens) and LiteLLM's price map (audio
    seconds, characters, the models genai-prices lacks) and show the difference; with --apply,
    merge the reviewed proposal into rate_card.csv (SPEC 4 overlap rules, every change listed)."""
    settings = load_settings()
    path = proposal or settings.home / "rates" / "rate_card_proposal.csv"
    try:
        if apply_:
            if not path.exists():
                raise click.ClickException(
                    f"no proposal at {path}; run `ledger rates import` first and review it"
                )
            for line in apply_proposal(settings, path):
                console.print(line, highlight=False, markup=False)
            console.print(f"rate card: {settings.reference_dir / 'rate_card.csv'}")
            return
        result = propose_rates(settings, effective_from.date() if effective_from else None)
    except (RatesError, ReferenceDataError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from exc
    write_proposal(result, path)
    for line in describe_proposal(result):
        console.print(line, highlight=False, markup=False)
    counts = result.counts()
    console.print(
        f"{counts['new']} new, {counts['change']} changed, {counts['unchanged']} unchanged, "
        f"{counts['conflict']} conflicting rows from {result.catalogue}; "
        f"{len(result.unknown)} models not in the catalogue. Review {path}, then "
        "`ledger rates import --apply`",
        highlight=False,
        markup=False,
    )


@rates.command("check")
def rates_check() -> None:
    """List the meters in use that the current rate card does not price (exit 1 if any), and
    propose the alias rows that would give a gap a priced rate-card name."""
    settings = load_settings()
    try:
        gaps = check_rates(settings)
        proposals = propose_aliases(settings, gaps)
    except (ReferenceDataError, LookupError) as exc:
        raise click.ClickException(str(exc)) from exc
    for gap in gaps:
        seen = (gap.seen_provider, gap.seen_model)
        shown = "" if seen == (gap.provider, gap.model) else f" (seen as {'/'.join(seen)})"
        console.print(
            f"unpriced {gap.provider}/{gap.model} {gap.meter}{shown}: {gap.usage_events:,} "
            f"events, quantity {gap.quantity}, {gap.first_seen:%Y-%m-%d %H:%M} to "
            f"{gap.last_seen:%Y-%m-%d %H:%M} UTC",
            highlight=False,
            markup=False,
        )
    if proposals:
        console.print("proposed aliases (review, then add the rows to the reference files):")
        for proposal in proposals:
            console.print(f"  {proposal.reason}", highlight=False, markup=False)
        for line in alias_csv_lines(proposals):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    if gaps:
        raise click.ClickException(f"{len(gaps)} meters in use have no price on the rate card")
    console.print("every meter in use has a price on the rate card")


@click.group()
def reconcile() -> None:
    """Reconciliation of priced usage against what providers bill (SPEC 10)."""


@reconcile.command("import")
@click.argument("file", type=click.Path(path_type=Path))
def reconcile_import(file: Path) -> None:
    """Load a provider invoice or usage export (CSV: date, provider, component, model, item,
    amount, currency); `ledger build` then reconciles it."""
    try:
        rows, total = import_provider_costs(load_settings(), file)
    except (ReferenceDataError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from exc
    console.print(
        f"imported {rows:,} provider cost rows from {file.name} (amounts as given: {total}); "
        "run `ledger build` to reconcile them"
    )
