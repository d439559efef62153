"""The `ledger` command: simulate, ingest, build, export, report, alerts, demo."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ledger.settings import Settings

console = Console(stderr=True)


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Cost ledger and FinOps analytics for production voice agents.

    Settings come from the environment: LEDGER_HOME, LEDGER_REFERENCE_DIR,
    LEDGER_REPORTING_CURRENCY, LEDGER_TIMEZONE, LEDGER_WEBHOOK_URL.
    """


@main.command()
def schema() -> None:
    """Print the metering contract as JSON Schema."""
    from ledger.contract.events import json_schema

    click.echo(json.dumps(json_schema(), indent=2))


@main.command()
@click.option(
    "--out", type=click.Path(path_type=Path), help="Folder (default: the landing folder)."
)
@click.option("--tenants", default=5, show_default=True, type=click.IntRange(1, 500))
@click.option("--days", default=30, show_default=True, type=click.IntRange(1, 3660))
@click.option("--start", type=click.DateTime(["%Y-%m-%d"]), default="2026-11-01", show_default=True)
@click.option("--seed", default=7, show_default=True, type=int)
@click.option("--sessions-per-day", type=click.IntRange(1), help="Volume knob (500 ~ 5M events).")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "parquet"]), default="jsonl")
def simulate(
    out: Path | None,
    tenants: int,
    days: int,
    start,
    seed: int,
    sessions_per_day: int | None,
    fmt: str,
) -> None:
    """Write seeded, realistic contract events into the landing folder."""
    from ledger.simulate import simulate as run_simulation

    settings = _settings()
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
        )
    console.print(
        f"simulated {summary.events:,} events in {summary.sessions:,} sessions "
        f"({summary.bad_rows:,} bad rows, {summary.duplicates:,} duplicates) "
        f"into {len(summary.files)} files under {out_dir}"
    )


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
def ingest(paths: tuple[Path, ...]) -> None:
    """Ingest landing files (.jsonl, .jsonl.gz, .parquet; files or folders) into the warehouse.

    With no PATHS, ingests the landing folder. Each file is one transaction; a file already
    ingested (same content) is skipped.
    """

    settings = _settings()
    targets = list(paths) or [settings.landing_dir]
    results = _ingest_with_progress(settings, targets)
    _print_ingest_totals(results, settings)


def _ingest_with_progress(settings: Settings, targets: list[Path]):
    from ledger.ingest import ingest_paths

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
            progress.console.print(result.summary_line(), highlight=False)
            progress.advance(task)

        try:
            return ingest_paths(settings, targets, on_start=started, on_file=finished)
        except (FileNotFoundError, ValueError) as exc:
            raise click.ClickException(str(exc)) from exc


def _print_ingest_totals(results, settings: Settings) -> None:
    new = [r for r in results if r.status == "ingested"]
    console.print(
        f"{len(new)} files ingested ({len(results) - len(new)} already ingested): "
        f"{sum(r.accepted for r in new):,} events accepted, "
        f"{sum(r.duplicates for r in new):,} duplicates dropped, "
        f"{sum(r.quarantined for r in new):,} rows quarantined -> {settings.warehouse_path}"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
