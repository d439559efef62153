"""`ledger export`: the session ledger, FOCUS and OpenSLO, for other tools."""

from __future__ import annotations

from pathlib import Path

import click

from ledger.commands.cli.app import console, load_settings
from ledger.finops.focus import export_focus as write_focus_export
from ledger.reference import ReferenceDataError
from ledger.serving.export import export_session_ledger as write_session_ledger_export
from ledger.serving.openslo import export_openslo


@click.group()
def export() -> None:
    """Export ledger tables for machines (full precision)."""


@export.command("session-ledger")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="FILE.csv or .parquet")
@click.option("--tenant", help="Only this tenant.")
@click.option("--from", "date_from", type=click.DateTime(["%Y-%m-%d"]), help="First business date.")
@click.option("--to", "date_to", type=click.DateTime(["%Y-%m-%d"]), help="Last business date.")
def export_session_ledger(out: Path, tenant: str | None, date_from, date_to) -> None:
    """Write fct_session_ledger (every column, exact decimals) to CSV or Parquet."""
    if out.suffix not in (".csv", ".parquet"):
        raise click.UsageError("--out must end in .csv or .parquet")
    rows = write_session_ledger_export(
        load_settings(),
        out,
        tenant,
        date_from.date() if date_from else None,
        date_to.date() if date_to else None,
    )
    console.print(f"wrote {rows:,} sessions to {out}")


@export.command("focus")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="FILE.csv or .parquet")
@click.option("--from", "date_from", type=click.DateTime(["%Y-%m-%d"]), help="First business date.")
@click.option("--to", "date_to", type=click.DateTime(["%Y-%m-%d"]), help="Last business date.")
def export_focus(out: Path, date_from, date_to) -> None:
    """Write the ledger's cost as FOCUS 1.0 charges (exact decimals) from the published copy.

    Usage the rate card could not price is listed, with its quantities, in a sidecar file next
    to FILE (FILE.unpriced.csv|.parquet), never exported as a zero charge.
    """
    try:
        result = write_focus_export(
            load_settings(),
            out,
            date_from.date() if date_from else None,
            date_to.date() if date_to else None,
        )
    except (FileNotFoundError, LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    console.print(f"wrote {result.charges:,} FOCUS charges to {result.path}")
    console.print(f"wrote {result.unpriced_lines:,} unpriced usage lines to {result.unpriced_path}")


@export.command("openslo")
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="A directory (openslo.yaml is written into it) or a file to write.",
)
def export_openslo_command(out: Path) -> None:
    """The latency SLOs (latency_budgets.yaml, LEDGER_SLO_WINDOW_DAYS, LEDGER_BURN_RATE_RULES) as
    OpenSLO v1 documents in one YAML file: SLIs, SLOs, burn-rate alert conditions, policies and
    the owner teams' notification targets."""
    try:
        written, count = export_openslo(load_settings(), out)
    except ReferenceDataError as exc:
        raise click.ClickException(str(exc)) from None
    console.print(f"{count} SLOs as OpenSLO v1 documents: {written}", highlight=False, markup=False)
