"""What drove the cost change (Overview and Margin): the cells of ledger/serving/drivers.py."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from dashboards.connection import fetch
from dashboards.queries.common import cached, session_filter
from ledger.serving.drivers import Driver, cells_sql, decompose

if TYPE_CHECKING:
    from dashboards.filters import Filters


@cached
def drivers(version: str, filters: Filters, previous: Filters) -> list[Driver]:
    """The cost change from `previous` to `filters` split per tenant, component, provider and
    model into volume, price and mix (the comparison period lies just before the selected one:
    one date range covers both)."""
    where, params = session_filter(replace(filters, date_from=previous.date_from))
    _, rows = fetch(version, cells_sql(where), [filters.date_from, filters.date_to, *params])
    return decompose(rows)
