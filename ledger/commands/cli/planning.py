"""`ledger replay` and `whatif`: recorded traffic replayed, a past period repriced."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ledger.commands.cli.app import console, load_settings
from ledger.commands.whatif import WhatIfError, what_if, write_outputs
from ledger.core.numbers import money, signed_money
from ledger.pipeline.transform import DbtRunError
from ledger.reference import ReferenceDataError
from ledger.simulate.replay import ReplayError
from ledger.simulate.replay import replay as run_replay


@click.command()
@click.option(
    "--from",
    "date_from",
    required=True,
    type=click.DateTime(["%Y-%m-%d"]),
    help="First business date of the recorded sessions.",
)
@click.option(
    "--to", "date_to", required=True, type=click.DateTime(["%Y-%m-%d"]), help="Last business date."
)
@click.option("--tenant", help="Only this tenant's sessions.")
@click.option(
    "--scale", default=1, show_default=True, type=click.IntRange(1), help="Copies of each session."
)
@click.option(
    "--speed",
    default=1.0,
    show_default=True,
    type=click.FloatRange(0, min_open=True),
    help="Time compression around the window's start (2 = twice as fast).",
)
@click.option(
    "--shift-minutes",
    default=0,
    show_default=True,
    type=int,
    help="Fixed offset added to every time (may be negative).",
)
@click.option(
    "--seed",
    default=7,
    show_default=True,
    type=int,
    help="The new ids are deterministic from it and the copy number.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="Folder for the landing files (e.g. the landing folder).",
)
def replay(date_from, date_to, tenant, scale, speed, shift_minutes, seed, out: Path) -> None:
    """Re-emit recorded sessions as contract events: new ids, source `<source>-replay`, shifted
    times, N copies each, as Parquet landing files (SPEC 11)."""
    try:
        summary = run_replay(
            load_settings(),
            out,
            date_from=date_from.date(),
            date_to=date_to.date(),
            tenant=tenant,
            scale=scale,
            speed=speed,
            shift=timedelta(minutes=shift_minutes),
            seed=seed,
        )
    except ReplayError as exc:
        raise click.ClickException(str(exc)) from exc
    console.print(
        f"replayed {summary.sessions:,} sessions x {scale} = {summary.copies:,} sessions, "
        f"{summary.events:,} events, into {len(summary.files)} files under {out}",
        highlight=False,
    )


@click.command()
@click.option(
    "--reference",
    "reference_dir",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder of candidate reference data (rate_card.csv, price_plans.csv, ...).",
)
@click.option(
    "--route-map",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="CSV phase,route,provider,model: which model serves each LLM phase/route.",
)
@click.option("--from", "date_from", type=click.DateTime(["%Y-%m-%d"]), help="First business date.")
@click.option("--to", "date_to", type=click.DateTime(["%Y-%m-%d"]), help="Last business date.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="FILE stem for FILE.csv and FILE.xlsx (default: the reports folder, whatif-<digest>).",
)
def whatif(reference_dir: Path, route_map, date_from, date_to, out) -> None:
    """Reprice a past period under candidate reference data, in a scratch copy (SPEC 11): per
    tenant cost, revenue and margin now and under the candidate. The published ledger is never
    touched."""
    settings = load_settings()
    try:
        result = what_if(
            settings,
            reference_dir,
            route_map=route_map,
            date_from=date_from.date() if date_from else None,
            date_to=date_to.date() if date_to else None,
        )
    except (WhatIfError, ReferenceDataError, DbtRunError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from exc

    table = Table(title=f"what-if under {reference_dir} ({result.currency}; candidate - now)")
    for title in ("tenant", "cost now", "cost candidate", "difference", "revenue now",
                  "revenue candidate", "difference", "margin now", "margin candidate",
                  "difference"):  # fmt: skip
        table.add_column(title, justify="left" if title == "tenant" else "right")
    for row in result.tenants:
        table.add_row(
            row.tenant_id,
            money(row.cost_now),
            money(row.cost_candidate),
            signed_money(row.cost_difference),
            money(row.revenue_now),
            money(row.revenue_candidate),
            signed_money(row.revenue_difference),
            money(row.margin_now),
            money(row.margin_candidate),
            signed_money(row.margin_difference),
        )
    Console(soft_wrap=True).print(table)
    stem = out or settings.reports_dir / f"whatif-{result.reference_digest[:12]}"
    csv_path, xlsx_path = write_outputs(result, stem)
    console.print(f"wrote {csv_path} and {xlsx_path}", highlight=False)
