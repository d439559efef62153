"""The root of the `ledger` command: the group, the console every command prints to, and the
settings every command reads.

Each command group lives in a module of its own (`ledger.commands.cli.<module>`), imported only
when one of its commands runs (`COMMANDS`): `ledger ingest` does not import Dagster or Streamlit,
and each module imports what it needs at its top.
"""

from __future__ import annotations

import importlib

import click
import duckdb
from rich.console import Console

from ledger.core.durable import disk_full_message
from ledger.core.home_lock import HomeLocked
from ledger.core.settings import ENVIRONMENT, Settings
from ledger.warehouse import corruption_message, is_corruption, lock_conflict_message

# soft_wrap: summary lines stay one line each in logs and pipes, whatever the width.
console = Console(stderr=True, soft_wrap=True)

# Each top-level command or group -> "module:attribute" under ledger.commands.cli; the one list
# of what `ledger` offers (docs/commands.md documents each, tests/test_docs_snippets.py checks).
COMMANDS: dict[str, str] = {
    "schema": "data:schema",
    "simulate": "data:simulate",
    "ingest": "data:ingest",
    "recover": "data:recover",
    "build": "pipeline:build",
    "replay": "planning:replay",
    "whatif": "planning:whatif",
    "export": "exports:export",
    "rates": "finops:rates",
    "reconcile": "finops:reconcile",
    "alerts": "alerting:alerts",
    "report": "alerting:report",
    "budgets": "slo:budgets",
    "serve": "services:serve",
    "collect": "services:collect",
    "up": "services:up",
    "demo": "services:demo",
    "backup": "home:backup",
    "restore": "home:restore",
}


def load_settings() -> Settings:
    """The settings from the environment; a bad value is a usage error naming the variable."""
    try:
        return Settings.from_env()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


class LedgerGroup(click.Group):
    """The root group: commands loaded from their module when named (`COMMANDS`); a damaged
    warehouse, on any command, is one line that names `ledger recover`, a home or warehouse
    another run holds is one line that names the holder, and a full disk is one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        module, attribute = where.split(":")
        return getattr(importlib.import_module(f"ledger.commands.cli.{module}"), attribute)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except HomeLocked as exc:
            raise click.ClickException(str(exc)) from None
        except duckdb.Error as exc:
            if is_corruption(exc):
                raise click.ClickException(corruption_message(exc)) from None
            known = lock_conflict_message(exc) or disk_full_message(exc)
            if known is None:
                raise
            raise click.ClickException(known) from None
        except OSError as exc:
            # A full disk fails every write: one line, not a traceback per file or request.
            full = disk_full_message(exc)
            if full is None:
                raise
            raise click.ClickException(full) from None


@click.group(cls=LedgerGroup, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Cost ledger and FinOps analytics for production voice agents."""


# Every setting, from the one mapping of settings to variables (docs/commands.md says what each
# means): the help never names a subset that falls behind.
main.help = (
    f"{main.help}\n\nSettings come from the environment (docs/commands.md): "
    f"{', '.join(ENVIRONMENT.values())}."
)
