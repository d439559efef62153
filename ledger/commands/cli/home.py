"""`ledger backup` and `restore`: the home as a whole."""

from __future__ import annotations

from pathlib import Path

import click

from ledger.commands.backup import BackupError
from ledger.commands.backup import backup as run_backup
from ledger.commands.backup import restore as run_restore
from ledger.commands.cli.app import console, load_settings


@click.command()
@click.argument("dest", type=click.Path(path_type=Path))
def backup(dest: Path) -> None:
    """Back up what cannot be rebuilt into DEST (a new or empty folder).

    The raw layer with its manifest, the landing folder (what was acknowledged and not yet
    ingested), the ops state, provider bills, the reference data, the weekly reviews and the
    access file; consistent, under the home's run lock, with every file's checksum.
    """
    try:
        summary = run_backup(load_settings(), dest)
    except BackupError as exc:
        raise click.ClickException(str(exc)) from None
    console.print(summary.line("backed up into"), highlight=False, markup=False)


@click.command()
@click.argument("src", type=click.Path(exists=True, file_okay=False, path_type=Path))
def restore(src: Path) -> None:
    """Restore a backup into LEDGER_HOME (which must hold no warehouse yet), once every file
    matches the backup's checksums.

    The reference data goes to LEDGER_HOME/reference: point LEDGER_REFERENCE_DIR there, then
    `ledger build` rebuilds the marts and publishes.
    """
    settings = load_settings()
    try:
        summary = run_restore(settings, src)
    except BackupError as exc:
        raise click.ClickException(str(exc)) from None
    console.print(summary.line("restored into"), highlight=False, markup=False)
    console.print(
        f"next: export LEDGER_REFERENCE_DIR={settings.home / 'reference'} and run `ledger build`",
        highlight=False,
        markup=False,
    )
