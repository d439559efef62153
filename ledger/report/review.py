"""`ledger report weekly` and the weekly Dagster job: write one ISO week's margin review.

    result = write_weekly_review(settings, "2026-W47")
    result.folder  # LEDGER_HOME/reports/2026-W47/ with .html, .md and .xlsx

Before reading the week, each closed day of it is checked for anomalies (recorded, not notified:
the review is their delivery), so the review lists them even if a daily run was missed. Then
restatements of earlier reported weeks are found and this week's figures are snapshotted.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from ledger.alerts.figures import require_marts
from ledger.alerts.run import record_days_for_report
from ledger.core.calendar import WeekError, parse_iso_week, previous_iso_week, utc_now
from ledger.core.durable import write_atomically
from ledger.core.settings import Settings
from ledger.report.budgets import load_leverage, load_spend_budgets
from ledger.report.capacity import load_capacity
from ledger.report.documents import render_html, render_markdown, write_xlsx
from ledger.report.reconciliation import load_reconciliation
from ledger.report.restatement import find_restatements_and_snapshot
from ledger.report.weekly import WeeklyReview, latest_complete_iso_week, load_weekly_review
from ledger.serving.published_copy import open_published_with_ops

# `--week latest`: the newest week the data holds completely (demo or historical data).
LATEST = "latest"


@dataclass(frozen=True)
class ReviewResult:
    review: WeeklyReview
    folder: Path
    html: Path
    markdown: Path
    xlsx: Path
    # This run's copy of the three documents, never overwritten (the review is a record).
    archived: Path | None = None

    @property
    def lines(self) -> list[str]:
        lines = [
            f"weekly margin review {self.review.iso_week}: {len(self.review.tenants)} tenants, "
            f"{len(self.review.anomalies)} anomalies, {len(self.review.restatements)} "
            "restated figures",
            f"  {self.html}",
            f"  {self.markdown}",
            f"  {self.xlsx}",
        ]
        if self.review.days_closed < 7:
            lines.append(
                f"note: only {self.review.days_closed} of 7 days of the week are closed in the data"
            )
        if self.review.replay_sessions:
            lines.append(f"note: {self.review.replay_sessions:,} replayed sessions excluded")
        return lines


def write_weekly_review(
    settings: Settings, iso_week: str | None = None, *, now: datetime | None = None
) -> ReviewResult:
    """Write the review of `iso_week` ('2026-W47'; None: the week before this one; 'latest': the
    newest week the data holds completely)."""
    now = utc_now(now)
    with open_published_with_ops(settings) as con:
        require_marts(con, str(settings.published_path))
        if iso_week == LATEST:
            week = latest_complete_iso_week(con, settings.timezone) or ""
            if not week:
                raise WeekError("no complete ISO week in the marts yet")
        else:
            week = iso_week or previous_iso_week(settings.timezone, now)
        first, _ = parse_iso_week(week)
        record_days_for_report(con, [first + timedelta(days=i) for i in range(7)], settings, now)
        review = load_weekly_review(con, week, settings.reporting_currency, settings.timezone, now)
        review.restatements = find_restatements_and_snapshot(con, week, review.tenants, now)
        review.reconciliation = load_reconciliation(con, first, first + timedelta(days=6))
        review.capacity = load_capacity(con, week)
        review.spend_budgets = load_spend_budgets(con, first + timedelta(days=6), settings.timezone)
        review.leverage = load_leverage(con)
    folder = settings.reports_dir / week
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"margin-review-{week}"
    html_path, md_path, xlsx_path = (folder / f"{stem}.{ext}" for ext in ("html", "md", "xlsx"))
    # A reader (or a mail job) never picks up a half-written document.
    write_atomically(html_path, lambda p: p.write_text(render_html(review), encoding="utf-8"))
    write_atomically(md_path, lambda p: p.write_text(render_markdown(review), encoding="utf-8"))
    write_atomically(xlsx_path, lambda p: write_xlsx(review, p))
    archived = _archive(
        settings.reports_dir / "archive" / week, (html_path, md_path, xlsx_path), now
    )
    return ReviewResult(review, folder, html_path, md_path, xlsx_path, archived)


def _archive(folder: Path, documents: tuple[Path, ...], now: datetime) -> Path:
    """Copy this run's documents to `folder/<UTC time of the run>/` (`reports/archive/<week>/`):
    the latest documents keep their names for readers and mail jobs, and each version sent stays
    as it was sent."""
    stamp = f"{now:%Y%m%dT%H%M%S}Z"
    for attempt in range(1, 1000):
        target = folder / (stamp if attempt == 1 else f"{stamp}-{attempt}")
        try:
            target.mkdir(parents=True)  # never an existing run's folder
            break
        except FileExistsError:
            continue
    else:
        raise RuntimeError(f"{folder}: no free name for this run's documents")
    for document in documents:
        write_atomically(
            target / document.name, lambda staged, source=document: shutil.copyfile(source, staged)
        )
    return target
