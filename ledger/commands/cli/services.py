"""`ledger serve`, `collect serve`, `up` and `demo`: the long-running services."""

from __future__ import annotations

from pathlib import Path

import click

from ledger.alerts.run import first_checkable_date
from ledger.collect.connections import ConnectionLimits
from ledger.collect.credentials import CredentialsError, load_credentials
from ledger.collect.server import CollectorConfig
from ledger.collect.server import serve as run_collector
from ledger.commands.cli.alerting import alerts_run, report_weekly
from ledger.commands.cli.app import console, load_settings
from ledger.commands.cli.data import simulate
from ledger.commands.cli.pipeline import build
from ledger.commands.cli.slo import budgets_alerts
from ledger.commands.serve import ServeRefused
from ledger.commands.serve import serve as run_boards
from ledger.commands.up import Ports, UpRefused
from ledger.commands.up import up as run_up
from ledger.serving.access_file import AccessError


@click.command()
@click.option("--port", default=8501, show_default=True, type=int)
@click.option(
    "--address",
    default="127.0.0.1",
    show_default=True,
    help="Bind address; any other than this machine needs the access file (sign-in).",
)
def serve(port: int, address: str) -> None:
    """Serve the Streamlit boards on the published copy.

    Binds 127.0.0.1 by default. With LEDGER_HOME/access.yaml (or LEDGER_ACCESS_FILE) every reader
    signs in (auth-proxy header or Streamlit OIDC) and sees only the tenants it grants them.
    """
    try:
        run_boards(load_settings(), port=port, address=address)
    except (AccessError, ServeRefused) as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
def collect() -> None:
    """Collectors: the authenticated HTTP collector for events and Vapi / Retell webhooks."""


@collect.command("serve")
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Credentials YAML: bearer token and granted tenants per source, Vapi secret, Retell key.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address.")
@click.option("--port", default=8787, show_default=True, type=int)
@click.option("--max-body-mb", default=8, show_default=True, type=click.IntRange(1, 1024))
@click.option(
    "--header-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds a client has for its request line and headers (else 408 and closed).",
)
@click.option(
    "--body-timeout",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds from the end of the headers to the end of the body (else closed).",
)
@click.option(
    "--keep-alive-timeout",
    default=5,
    show_default=True,
    type=click.IntRange(min=1),
    help="Seconds an idle connection is kept open between requests.",
)
@click.option(
    "--max-connections",
    default=256,
    show_default=True,
    type=click.IntRange(min=1),
    help="Connections served at once; a request beyond them gets 503 (clients retry).",
)
def collect_serve(
    config_path: Path,
    host: str,
    port: int,
    max_body_mb: int,
    header_timeout: float,
    body_timeout: float,
    keep_alive_timeout: int,
    max_connections: int,
) -> None:
    """Accept events (POST /v1/events) and webhooks into the landing folder."""
    settings = load_settings()
    try:
        credentials = load_credentials(config_path)
    except CredentialsError as exc:
        raise click.ClickException(str(exc)) from exc
    console.print(
        f"collector on http://{host}:{port} -> {settings.landing_dir} "
        f"({len(credentials.tokens)} sources)"
    )
    limits = ConnectionLimits(header_timeout, body_timeout, keep_alive_timeout, max_connections)
    config = CollectorConfig(
        settings.landing_dir,
        credentials,
        max_body_mb * 1024 * 1024,
        max_line_bytes=settings.max_line_bytes,
        limits=limits,
    )
    run_collector(config, host=host, port=port)


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The collector's and the boards' address (another needs the boards' access file).",
)
@click.option("--dagster-port", default=3000, show_default=True, type=int, help="Dagster UI.")
@click.option("--collector-port", default=8787, show_default=True, type=int)
@click.option("--boards-port", default=8501, show_default=True, type=int)
@click.option(
    "--pipeline-port",
    default=9108,
    show_default=True,
    type=int,
    help="The pipeline's /healthz and /metrics.",
)
@click.option(
    "--collector-config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The collector's credentials YAML (default: LEDGER_HOME/collector.yaml if present; "
    "without one the collector is not started).",
)
def up(
    host: str,
    dagster_port: int,
    collector_port: int,
    boards_port: int,
    pipeline_port: int,
    collector_config: Path | None,
) -> None:
    """Run everything: the Dagster daemon and UI, the collector and the boards, supervised.

    The Dagster instance lives in LEDGER_HOME/dagster (SQLite; PostgreSQL with
    LEDGER_DAGSTER_POSTGRES_URL), each service logs to LEDGER_HOME/logs/<service>.log, and
    SIGTERM or Ctrl-C stops them all.
    """
    settings = load_settings()
    if collector_config is None and (settings.home / "collector.yaml").is_file():
        collector_config = settings.home / "collector.yaml"
    ports = Ports(host, dagster_port, collector_port, boards_port, pipeline_port)
    try:
        run_up(
            settings,
            ports,
            collector_config,
            echo=lambda text: console.print(text, highlight=False, markup=False),
        )
    except UpRefused as exc:
        raise click.ClickException(str(exc)) from None


@click.command()
@click.option("--tenants", default=5, show_default=True, type=click.IntRange(1, 500))
@click.option("--days", default=30, show_default=True, type=click.IntRange(1, 3660))
@click.option("--serve/--no-serve", "serve_boards", default=True, show_default=True)
@click.option("--port", default=8501, show_default=True, type=int)
@click.pass_context
def demo(ctx: click.Context, tenants: int, days: int, serve_boards: bool, port: int) -> None:
    """Simulate a month of traffic, run the whole pipeline, then serve the boards."""
    settings = load_settings()
    settings.ensure_dirs()
    if any(settings.landing_dir.iterdir()):
        console.print(f"landing folder {settings.landing_dir} already has data: not simulating")
    else:
        ctx.invoke(simulate, tenants=tenants, days=days)
    ctx.invoke(build)
    # The simulated month lies in the past: review and check the data's own days, not the
    # calendar's "last week" and "yesterday".
    ctx.invoke(report_weekly, week="latest")
    # Every day of the month as the daily job would have checked it, so the inbox holds what a
    # month brings: paged, cooled-down and not-paged anomalies to follow from their links.
    ctx.invoke(alerts_run, day="latest", date_from=first_checkable_date(settings).isoformat())
    ctx.invoke(budgets_alerts)  # the build sent them; this says what fired
    console.print(f"warehouse: {settings.warehouse_path}")
    console.print(f"published copy for the boards: {settings.published_path}")
    if serve_boards:
        ctx.invoke(serve, port=port)
