"""The sidebar's choices: distinct tenants, scenarios and pipelines of the ledger."""

from __future__ import annotations

from dashboards.connection import run
from dashboards.queries.common import cached


@cached
def filter_options(version: str) -> dict[str, list[str]]:
    """Distinct tenants, scenarios and pipelines of the ledger, for the sidebar."""
    options = {}
    for column in ("tenant_id", "scenario", "pipeline"):
        frame = run(
            version,
            f"select distinct {column} as value from marts.fct_session_ledger "
            f"where {column} is not null order by 1",
        )
        options[column] = frame["value"].tolist()
    return options
