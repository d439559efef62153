"""One run of the budget alerts (SPEC 13): the latency SLOs' burn rates to the owner teams and the
spend budgets to finance. The build's last step and `ledger budgets alerts` call it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ledger.alerts.figures import latest_closed_business_date
from ledger.alerts.routing import ROUTED_KINDS, router_for
from ledger.alerts.slo import notify_burn_alerts, retry_routed
from ledger.alerts.spend import KIND as SPEND_KIND
from ledger.alerts.spend import notify_spend_budgets
from ledger.alerts.store import (
    failed_deliveries,
    new_id,
    record_undelivered,
    undelivered_lines,
)
from ledger.core.calendar import utc_now
from ledger.core.settings import Settings
from ledger.serving.published_copy import has_mart, open_published_with_ops


def run_budget_alerts(
    settings: Settings,
    *,
    now: datetime | None = None,
    echo: Callable[[str], None] | None = print,
) -> list[str]:
    """Evaluate and deliver; returns the summary lines. Spend budgets are checked on the newest
    closed business date of the data (a day still filling up would read as a cheap day)."""
    now = utc_now(now)
    router = router_for(settings, echo)
    run_id = new_id()
    with open_published_with_ops(settings) as con:
        # A destination that cannot be used is said first; its alerts are kept for it, every
        # other destination's go out.
        lines = [*router.unusable, *notify_burn_alerts(con, settings, router, now, run_id).lines]
        sent, failing = retry_routed(con, router, SPEND_KIND, lambda _fingerprint: None)
        if sent:
            lines.append(f"{sent} earlier failed spend notifications delivered")
        if failing:
            lines.append(f"{failing} earlier spend notifications still failing")
        as_of = (
            latest_closed_business_date(con, settings.timezone)
            if has_mart(con, "dim_spend_budgets") and has_mart(con, "fct_session_ledger")
            else None
        )
        if as_of is not None:
            lines += notify_spend_budgets(con, settings, router, as_of, now, run_id).lines
        lines += undelivered_lines(failed_deliveries(con, kinds=ROUTED_KINDS))
        record_undelivered(con, settings.alerts_dir)
    return lines
