"""The `ledger` command: simulate, ingest, recover, build, export, report, alerts, demo."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ledger.core.settings import Settings
from ledger.core.terminal import printable

# soft_wrap: summary lines stay one line each in logs and pipes, whatever the width.
console = Console(stderr=True, soft_wrap=True)


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


class _LedgerGroup(click.Group):
    """Turns a damaged warehouse, on any command, into one line that names `ledger recover`, and a
    home another run holds into one line that names the holder."""

    def invoke(self, ctx: click.Context):
        import duckdb

        from ledger.core.home_lock import HomeLocked
        from ledger.warehouse import corruption_message, is_corruption

        try:
            return super().invoke(ctx)
        except HomeLocked as exc:
            raise click.ClickException(str(exc)) from None
        except duckdb.Error as exc:
            if not is_corruption(exc):
                raise
            raise click.ClickException(corruption_message(exc)) from None


@click.group(cls=_LedgerGroup, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Cost ledger and FinOps analytics for production voice agents.

    Settings come from the environment: LEDGER_HOME, LEDGER_REFERENCE_DIR,
    LEDGER_REPORTING_CURRENCY, LEDGER_TIMEZONE, LEDGER_WEBHOOK_URL, LEDGER_ACCESS_FILE.
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
            shadow=shadow,
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

    from ledger.core.home_lock import home_lock

    settings = _settings()
    targets = list(paths) or [settings.landing_dir]
    with home_lock(settings.home):  # another run holding the home: stop now, say who
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
            progress.console.print(_file_line(result.summary_line()))
            progress.advance(task)

        def refused(path: Path, why: str) -> None:
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
    from rich.text import Text

    return Text(printable(text))


def _print_ingest_totals(results, settings: Settings) -> None:
    new = [r for r in results if r.status == "ingested"]
    console.print(
        f"{len(new)} files ingested ({len(results) - len(new)} already ingested): "
        f"{sum(r.accepted for r in new):,} events accepted, "
        f"{sum(r.duplicates for r in new):,} duplicates dropped, "
        f"{sum(r.quarantined for r in new):,} rows quarantined -> {settings.warehouse_path}"
    )


@main.command()
def recover() -> None:
    """Rebuild the warehouse from the landing folder (after it was damaged) and swap it in.

    Files are ingested in the order of the old manifest when it can still be read (so the version
    kept for each id_conflict is the one kept before), else in path order. The old file is kept
    beside the new one. Run `ledger build` afterwards to reload reference data and the marts.
    """
    from ledger.core.home_lock import home_lock
    from ledger.ingest.recover import recover as run_recovery

    settings = _settings()

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


@main.command()
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
    from ledger.commands.build import run_build
    from ledger.core.home_lock import home_lock

    settings = _settings()
    settings.ensure_dirs()
    with home_lock(settings.home):  # another run holding the home: stop before anything runs
        console.print(
            "building: ingest -> reference data -> refresh plan -> dbt build -> publish ..."
        )
        outcome = run_build(settings, full_refresh=full_refresh)
    for line in outcome.lines:
        console.print(line, highlight=False)
    if not outcome.success:
        from ledger.warehouse import corruption_message, mentions_corruption

        damaged = next((line for line in outcome.lines if mentions_corruption(line)), None)
        if damaged is not None:  # found by a step half-way (a checksum error, say)
            raise click.ClickException(corruption_message(damaged.split(": ", 1)[-1]))
        raise click.ClickException(
            "the build failed; the boards keep the previous published copy. "
            "Fix the cause above and run `ledger build` again."
        )


@main.command()
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
    from datetime import timedelta

    from ledger.simulate.replay import ReplayError
    from ledger.simulate.replay import replay as run_replay

    try:
        summary = run_replay(
            _settings(),
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


@main.command()
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
    from ledger.commands.whatif import WhatIfError, what_if, write_outputs
    from ledger.core.numbers import money, signed_money
    from ledger.pipeline.transform import DbtRunError
    from ledger.reference import ReferenceDataError

    settings = _settings()
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
    from rich.table import Table

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


@main.group()
def export() -> None:
    """Export ledger tables for machines (full precision)."""


@export.command("session-ledger")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="FILE.csv or .parquet")
@click.option("--tenant", help="Only this tenant.")
@click.option("--from", "date_from", type=click.DateTime(["%Y-%m-%d"]), help="First business date.")
@click.option("--to", "date_to", type=click.DateTime(["%Y-%m-%d"]), help="Last business date.")
def export_session_ledger(out: Path, tenant: str | None, date_from, date_to) -> None:
    """Write fct_session_ledger (every column, exact decimals) to CSV or Parquet."""
    from ledger.serving.export import export_session_ledger as run_export

    if out.suffix not in (".csv", ".parquet"):
        raise click.UsageError("--out must end in .csv or .parquet")
    rows = run_export(
        _settings(),
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
    from ledger.finops.focus import export_focus as run_export

    try:
        result = run_export(
            _settings(),
            out,
            date_from.date() if date_from else None,
            date_to.date() if date_to else None,
        )
    except (FileNotFoundError, LookupError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    console.print(f"wrote {result.charges:,} FOCUS charges to {result.path}")
    console.print(f"wrote {result.unpriced_lines:,} unpriced usage lines to {result.unpriced_path}")


@main.group()
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
    from ledger.finops.rates import (
        RatesError,
        apply_proposal,
        describe_proposal,
        propose_rates,
        write_proposal,
    )
    from ledger.reference import ReferenceDataError

    settings = _settings()
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
    from ledger.finops.rates import alias_csv_lines, check_rates, propose_aliases
    from ledger.reference import ReferenceDataError

    settings = _settings()
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


@main.group()
def reconcile() -> None:
    """Reconciliation of priced usage against what providers bill (SPEC 10)."""


@reconcile.command("import")
@click.argument("file", type=click.Path(path_type=Path))
def reconcile_import(file: Path) -> None:
    """Load a provider invoice or usage export (CSV: date, provider, component, model, item,
    amount, currency); `ledger build` then reconciles it."""
    from ledger.finops.provider_costs import import_provider_costs
    from ledger.reference import ReferenceDataError

    try:
        rows, total = import_provider_costs(_settings(), file)
    except (ReferenceDataError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from exc
    console.print(
        f"imported {rows:,} provider cost rows from {file.name} (amounts as given: {total}); "
        "run `ledger build` to reconcile them"
    )


@main.command()
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
    from ledger.commands.serve import ServeRefused
    from ledger.commands.serve import serve as run_boards
    from ledger.serving.access_file import AccessError

    try:
        run_boards(_settings(), port=port, address=address)
    except (AccessError, ServeRefused) as exc:
        raise click.ClickException(str(exc)) from exc


@main.command()
@click.option("--tenants", default=5, show_default=True, type=click.IntRange(1, 500))
@click.option("--days", default=30, show_default=True, type=click.IntRange(1, 3660))
@click.option("--serve/--no-serve", "serve_boards", default=True, show_default=True)
@click.option("--port", default=8501, show_default=True, type=int)
@click.pass_context
def demo(ctx: click.Context, tenants: int, days: int, serve_boards: bool, port: int) -> None:
    """Simulate a month of traffic, run the whole pipeline, then serve the boards."""
    settings = _settings()
    settings.ensure_dirs()
    if any(settings.landing_dir.iterdir()):
        console.print(f"landing folder {settings.landing_dir} already has data: not simulating")
    else:
        ctx.invoke(simulate, tenants=tenants, days=days)
    ctx.invoke(build)
    # The simulated month lies in the past: review and check the newest complete data, not the
    # calendar's "last week" and "yesterday".
    ctx.invoke(report_weekly, week="latest")
    ctx.invoke(alerts_run, day="latest")
    ctx.invoke(budgets_alerts)  # the build sent them; this says what fired
    console.print(f"warehouse: {settings.warehouse_path}")
    console.print(f"published copy for the boards: {settings.published_path}")
    if serve_boards:
        ctx.invoke(serve, port=port)


@main.group()
def alerts() -> None:
    """Cost anomaly alerts (the daily Dagster job runs the same thing)."""


@alerts.command("run")
@click.option(
    "--date",
    "day",
    help="Business date YYYY-MM-DD, or 'latest' for the newest closed day in the data "
    "(default: yesterday in LEDGER_TIMEZONE).",
)
def alerts_run(day: str | None) -> None:
    """Detect cost anomalies for one business date and deliver the alerts.

    Alerts go to LEDGER_WEBHOOK_URL (Slack-compatible JSON) when it is set, otherwise to
    alerts/notifications.jsonl under LEDGER_HOME and this terminal. Every anomaly, sent or not,
    is kept in the warehouse table ops.anomalies. Exits 1 when a notification could not be
    delivered (it is kept and retried on the next run).
    """
    from datetime import date

    from ledger.alerts.delivery import WebhookURLError
    from ledger.alerts.figures import MartsMissingError
    from ledger.alerts.run import run_alerts
    from ledger.pipeline.publish import publish_records

    settings = _settings()
    if day and day != "latest":
        try:
            day = date.fromisoformat(day)  # type: ignore[assignment]
        except ValueError as exc:
            raise click.UsageError(f"--date takes YYYY-MM-DD or 'latest', got {day!r}") from exc
    try:
        result = run_alerts(
            settings,
            day or None,
            echo=lambda text: console.print(f"alert: {text}", highlight=False, markup=False),
        )
    except (MartsMissingError, WebhookURLError) as exc:
        raise click.ClickException(str(exc)) from None
    # The boards' anomaly inbox reads the published copy: publish what the run recorded, so the
    # link a notification carries finds its anomaly there.
    publish_records(settings)
    for line in result.lines:
        console.print(line, highlight=False, markup=False)
    if result.failed:
        raise click.ClickException(
            f"{result.failed} notifications could not be delivered (kept in ops.deliveries, "
            "retried by the next `ledger alerts run`)"
        )


@main.group()
def report() -> None:
    """Scheduled documents (the weekly Dagster job runs the same thing)."""


@report.command("weekly")
@click.option(
    "--week",
    help="ISO week such as 2026-W47, or 'latest' for the newest complete week in the data "
    "(default: the week before this one).",
)
def report_weekly(week: str | None) -> None:
    """Write the weekly margin review: HTML, Markdown and XLSX under LEDGER_HOME/reports/<week>/."""
    from ledger.alerts.figures import MartsMissingError
    from ledger.core.calendar import WeekError
    from ledger.pipeline.publish import publish_records
    from ledger.report.review import write_weekly_review
    from ledger.serving.published_copy import NotPublishedError

    settings = _settings()
    try:
        result = write_weekly_review(settings, week)
    except (MartsMissingError, NotPublishedError, WeekError) as exc:
        raise click.ClickException(str(exc)) from exc
    # The boards show the restatements the review found: publish them.
    publish_records(settings)
    for line in result.lines:
        console.print(line, highlight=False, markup=False)


@main.group()
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
    from ledger.collect.connections import ConnectionLimits
    from ledger.collect.credentials import CredentialsError, load_credentials
    from ledger.collect.server import CollectorConfig
    from ledger.collect.server import serve as run_collector

    settings = _settings()
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


# ---- running as a service (SPEC 14): `ledger up`, `ledger backup`, `ledger restore` -------------


@main.command()
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
    from ledger.commands.up import Ports, UpRefused
    from ledger.commands.up import up as run_up

    settings = _settings()
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


@main.command()
@click.argument("dest", type=click.Path(path_type=Path))
def backup(dest: Path) -> None:
    """Back up what cannot be rebuilt into DEST (a new or empty folder).

    The raw layer with its manifest, the landing folder (what was acknowledged and not yet
    ingested), the ops state, provider bills, the reference data, the weekly reviews and the
    access file; consistent, under the home's run lock, with every file's checksum.
    """
    from ledger.commands.backup import BackupError
    from ledger.commands.backup import backup as run_backup

    try:
        summary = run_backup(_settings(), dest)
    except BackupError as exc:
        raise click.ClickException(str(exc)) from None
    console.print(summary.line("backed up into"), highlight=False, markup=False)


@main.command()
@click.argument("src", type=click.Path(exists=True, file_okay=False, path_type=Path))
def restore(src: Path) -> None:
    """Restore a backup into LEDGER_HOME (which must hold no warehouse yet), once every file
    matches the backup's checksums.

    The reference data goes to LEDGER_HOME/reference: point LEDGER_REFERENCE_DIR there, then
    `ledger build` rebuilds the marts and publishes.
    """
    from ledger.commands.backup import BackupError
    from ledger.commands.backup import restore as run_restore

    settings = _settings()
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


# ---- SPEC 13: operating the budgets (latency SLOs, spend budgets) --------------------------------


@main.group()
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
    from ledger.alerts.budgets import run_budget_alerts
    from ledger.serving.published_copy import NotPublishedError

    try:
        lines = run_budget_alerts(
            _settings(),
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
    from ledger.commands.budget_review import review_budgets, review_lines, review_markdown
    from ledger.reference import ReferenceDataError
    from ledger.serving.published_copy import NotPublishedError

    if (proposed is None) == (candidate is None):
        raise click.UsageError("give a PROPOSED file or --from-shadow CANDIDATE (one of them)")
    try:
        review = review_budgets(_settings(), proposed, days=days, shadow_candidate=candidate)
    except (ReferenceDataError, NotPublishedError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    for line in review_lines(review):
        console.print(line, highlight=False, markup=False)
    if markdown is not None:
        markdown.write_text(review_markdown(review), encoding="utf-8")
        console.print(f"markdown: {markdown}", highlight=False, markup=False)


@export.command("openslo")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
def export_openslo_command(out: Path) -> None:
    """The latency SLOs (latency_budgets.yaml, LEDGER_SLO_WINDOW_DAYS, LEDGER_BURN_RATE_RULES) as
    OpenSLO v1 documents in one YAML file: SLIs, SLOs, burn-rate alert conditions and policies."""
    from ledger.reference import ReferenceDataError
    from ledger.serving.openslo import export_openslo

    try:
        count = export_openslo(_settings(), out)
    except ReferenceDataError as exc:
        raise click.ClickException(str(exc)) from None
    console.print(f"{count} SLOs as OpenSLO v1 documents: {out}", highlight=False, markup=False)


@budgets.command("forecast-accuracy")
@click.option("--month", required=True, help="The month to measure, YYYY-MM (a complete month).")
def budgets_forecast_accuracy(month: str) -> None:
    """The spend forecast made on days 10, 15 and 20 of a month against its actual spend, per
    tenant (the benchmark in docs/benchmarks.md)."""
    from datetime import date

    from ledger.finops.spend_budgets import forecast_accuracy
    from ledger.serving.published_copy import open_published_with_ops

    try:
        first = date.fromisoformat(f"{month}-01")
    except ValueError as exc:
        raise click.UsageError(f"--month takes YYYY-MM, got {month!r}") from exc
    with open_published_with_ops(_settings()) as con:
        rows = forecast_accuracy(con, first)
    console.print("tenant | day | forecast | actual | error % | actual inside the interval")
    for tenant, day, forecast, actual, error, inside in rows:
        console.print(
            f"{tenant} | {day} | {forecast:.2f} | {actual:.2f} | {error:+.1f} | "
            f"{'yes' if inside else 'no'}",
            highlight=False,
        )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
