"""`ledger schema`, `simulate`, `ingest` and `recover`: the contract, and data into the warehouse."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ledger.commands.cli.app import console, load_settings
from ledger.contract.events import json_schema
from ledger.core.home_lock import home_lock
from ledger.core.settings import Settings
from ledger.core.terminal import printable
from ledger.ingest import ingest_paths
from ledger.ingest.recover import recover as run_recovery
from ledger.simulate import simulate as run_simulation


@click.command()
def schema() -> None:
    """Print the metering contract as JSON Schema."""
    click.echo(json.dumps(json_schema(), indent=2))


@click.command()
@click.option(
    "--out", type=click.Path(path_type=Path), help="Folder (default: the landing folder)."
)
@click.option("--tenants", default=5, show_default=True, type=click.IntRange(1, 500))
@click.option("--days", default=30, show_default=True, type=click.IntRange(1, 3660))
@click.option("--start", type=click.DateTime(["%Y-%m-%d"]), default="2026-11-01", show_default=True)
@click.option("--seed", default=7, show_default=True, type=int)
@click.option("--sessions-per-day", type=click.IntRange(1), help="Volume knob (500 ~ 5M events).")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "parquet"]), default="jsonl")
@click.option(
    "--shadow/--no-shadow",
    default=True,
    show_default=True,
    help="Also emit a shadow endpointing candidate's turn.shadow decisions (SPEC 11).",
)
def simulate(
    out: Path | None,
    tenants: int,
    days: int,
    start,
    seed: int,
    sessions_per_day: int | None,
    fmt: str,
    shadow: bool,
) -> None:
    """Write seeded, realistic contract events into the landing folder."""
    settings = load_settings()
    out_dir = out or settings.landing_dir
    with Progress(
        TextColumn("simulating"),
        TextColumn("{task.completed:,} events"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("simulate", total=None)
        summary = run_simulation(
            out_dir,
            tenants=tenants,
            days=days,
            start=start.date(),
            seed=seed,
            sessions_per_day=sessions_per_day,
            fmt=fmt,  # type: ignore[arg-type]
            progress=lambda rows: progress.update(task, completed=rows),
            shadow=shadow,
        )
    console.print(
        f"simulated {summary.events:,} events in {summary.sessions:,} sessions "
        f"({summary.bad_rows:,} bad rows, {summary.duplicates:,} duplicates) "
        f"into {len(summary.files)} files under {out_dir}"
    )


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
def ingest(paths: tuple[Path, ...]) -> None:
    """Ingest landing files (.jsonl, .jsonl.gz, .parquet; files or folders) into the warehouse.

    With no PATHS, ingests the landing folder. Each file is one transaction; a file already
    ingested (same content) is skipped.
    """
    settings = load_settings()
    targets = list(paths) or [settings.landing_dir]
    refused: list[Path] = []
    with home_lock(settings.home):  # another run holding the home: stop now, say who
        results = _ingest_with_progress(settings, targets, refused)
    _print_ingest_totals(results, settings)
    # Paths the user named and did not get read are a failure of what was asked; a link found in
    # the landing folder's own scan is only reported (its reason is printed above).
    if paths and refused:
        raise click.ClickException(
            f"{len(refused)} of the paths named were refused (see above): nothing was read from "
            "them"
        )


def _ingest_with_progress(settings: Settings, targets: list[Path], refused_paths: list[Path]):

    with Progress(
        TextColumn("ingesting"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("ingest", total=None)

        def started(files: list[Path]) -> None:
            progress.update(task, total=len(files))

        def finished(result) -> None:
            progress.console.print(_file_line(result.summary_line()))
            progress.advance(task)

        def refused(path: Path, why: str) -> None:
            refused_paths.append(path)
            progress.console.print(_file_line(f"{path}: {why}"), style="yellow")

        try:
            return ingest_paths(
                settings,
                targets,
                on_start=started,
                on_file=finished,
                on_refused=refused,
                # Named paths too must be in the landing folder (SPEC 12).
                landing=settings.landing_dir,
            )
        except (FileNotFoundError, ValueError) as exc:
            raise click.ClickException(printable(exc)) from exc


def _file_line(text: str):
    """A line about a file, as plain text: its name's control characters escaped (no escape
    sequence reaches the terminal), and no `[...]` in it read as markup."""
    return Text(printable(text))


def _print_ingest_totals(results, settings: Settings) -> None:
    new = [r for r in results if r.status == "ingested"]
    console.print(
        f"{len(new)} files ingested ({len(results) - len(new)} already ingested): "
        f"{sum(r.accepted for r in new):,} events accepted, "
        f"{sum(r.duplicates for r in new):,} duplicates dropped, "
        f"{sum(r.quarantined for r in new):,} rows quarantined -> {settings.warehouse_path}"
    )


@click.command()
def recover() -> None:
    """Rebuild the warehouse from the landing folder (after it was damaged) and swap it in.

    Files are ingested in the order of the old manifest when it can still be read (so the version
    kept for each id_conflict is the one kept before), else in path order. The old file is kept
    beside the new one. Run `ledger build` afterwards to reload reference data and the marts.
    """
    settings = load_settings()

    def finished(result) -> None:
        console.print(_file_line(result.summary_line()))

    def refused(path: Path, why: str) -> None:
        console.print(_file_line(f"{path}: {why}"), style="yellow")

    try:
        with home_lock(settings.home):  # another run holding the home: stop now, say who
            outcome = run_recovery(settings, on_file=finished, on_refused=refused)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
    order = (
        "in the old manifest's order"
        if outcome.manifest_order
        else "in path order (the old manifest could not be read)"
    )
    new = [r for r in outcome.results if r.status == "ingested"]
    console.print(
        f"recovered {settings.warehouse_path} from {len(new)} files {order}: "
        f"{sum(r.accepted for r in new):,} events, {sum(r.quarantined for r in new):,} "
        "rows quarantined",
        highlight=False,
    )
    for path in outcome.missing:
        console.print(
            _file_line(f"{path}: in the old manifest but no longer found"), style="yellow"
        )
    if outcome.kept_old is not None:
        console.print(_file_line(f"the old warehouse is kept as {outcome.kept_old}"))
    console.print("next: `ledger build` reloads reference data and rebuilds the marts")
