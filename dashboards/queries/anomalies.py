"""The anomaly inbox: cost anomalies and rate-card drifts, as `ledger alerts run` recorded them.

The alerts' ledger is published next to the marts (`marts.alert_anomalies`,
`marts.alert_rate_card_drifts`; ledger/pipeline/publish.py); a copy published before the first
alert run has neither, and the inbox is then empty rather than broken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from dashboards.connection import run
from dashboards.queries.common import cached, published_table

if TYPE_CHECKING:
    from dashboards.filters import Filters

ANOMALIES = "alert_anomalies"
DRIFTS = "alert_rate_card_drifts"


@cached
def anomalies(version: str, filters: Filters) -> pd.DataFrame:
    """The anomalies of the period's business dates (and tenants), newest and worst first."""
    if not published_table(version, ANOMALIES):
        return pd.DataFrame()
    params: list = [filters.date_from, filters.date_to]
    tenants = ""
    if filters.tenants:
        tenants = "and list_contains(?::varchar[], tenant_id)"
        params.append(list(filters.tenants))
    return run(
        version,
        f"""
        select anomaly_id, tenant_id, business_date, metric, unit, currency, value, expected,
            abs_change, pct_change, robust_z, severity, cause_kind, cause_component,
            cause_component_share, cause_provider, cause_model, cause_provider_share, cause_hint,
            notification, first_detected_at, last_detected_at
        from marts.alert_anomalies
        where business_date between ? and ? {tenants}
        order by business_date desc,
            case severity when 'critical' then 0 when 'warning' then 1 else 2 end, tenant_id,
            metric
        """,
        params,
    )


@cached
def drifts(version: str, filters: Filters) -> pd.DataFrame:
    """The rate-card drifts of the period's (UTC) usage dates, newest and largest first."""
    if not published_table(version, DRIFTS):
        return pd.DataFrame()
    return run(
        version,
        """
        select usage_date, provider, component, model, currency, priced_cost, reported_cost,
            difference, difference_pct, model_difference, severity, notification
        from marts.alert_rate_card_drifts
        where usage_date between ? and ?
        order by usage_date desc, abs(difference) desc, provider, component
        """,
        [filters.date_from, filters.date_to],
    )
