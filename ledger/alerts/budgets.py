"""One run of the budget alerts (SPEC 13): the latency SLOs' burn rates to the owner teams and the
spend budgets to finance. The build's last step and `ledger budgets alerts` call it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ledger.alerts.routing import router_for
from ledger.alerts.slo import notify_burn_alerts
from ledger.alerts.store import new_id
from ledger.core.calendar import utc_now
from ledger.core.settings import Settings
from ledger.serving.published_copy import open_published_with_ops


def run_budget_alerts(
    settings: Settings,
    *,
    now: datetime | None = None,
    echo: Callable[[str], None] | None = print,
) -> list[str]:
    """Evaluate and deliver; returns the summary lines."""
    now = utc_now(now)
    router = router_for(settings, echo)
    run_id = new_id()
    with open_published_with_ops(settings) as con:
        slo = notify_burn_alerts(con, settings, router, now, run_id)
    return slo.lines
