"""`ledger build`: ingest, reference data, dbt and publish, as the Dagster job runs them."""

from __future__ import annotations

import click

from ledger.commands.build import run_build
from ledger.commands.cli.app import console, load_settings
from ledger.core.home_lock import home_lock
from ledger.warehouse import corruption_message, mentions_corruption


@click.command()
@click.option(
    "--full-refresh",
    is_flag=True,
    help="Recompute every model from all events (default: only what new data and reference "
    "edits touch).",
)
def build(full_refresh: bool) -> None:
    """Ingest new landing files, reload reference data, run dbt build and publish the marts.

    Runs the Dagster job `build_ledger` in this process; on any failure the published copy the
    boards read stays as it was. A build recomputes only the sessions and weeks new data touches;
    the first build of a warehouse, and `--full-refresh`, recompute everything.
    """
    settings = load_settings()
    settings.ensure_dirs()
    with home_lock(settings.home):  # another run holding the home: stop before anything runs
        console.print(
            "building: ingest -> reference data -> refresh plan -> dbt build -> publish ..."
        )
        outcome = run_build(settings, full_refresh=full_refresh)
    for line in outcome.lines:
        console.print(line, highlight=False)
    if not outcome.success:
        damaged = next((line for line in outcome.lines if mentions_corruption(line)), None)
        if damaged is not None:  # found by a step half-way (a checksum error, say)
            raise click.ClickException(corruption_message(damaged.split(": ", 1)[-1]))
        raise click.ClickException(
            "the build failed; the boards keep the previous published copy. "
            "Fix the cause above and run `ledger build` again."
        )
