"""Asset checks on the experience marts: operational rules that warn rather than fail a build.

A tenant-day whose P95 first audio is over its profile's first-audio total (SPEC 4 and 6) is a
latency incident for the owning teams, not a data error: the check warns and lists the days, with
the segment that owns the breach, so on-call sees who to call.

    checks = build_experience_checks(AssetKey(["marts", "fct_latency_budget_tenant_daily"]))
    Definitions(..., asset_checks=checks)

The warehouse is read through the `warehouse` resource (`LedgerWarehouse`), which resolves
`Settings.from_env()` when the check runs, never at import.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import duckdb
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetKey,
    AssetsDefinition,
    MetadataValue,
    asset_check,
)

from dagster_project.defs.resources import LedgerWarehouse

LATENCY_BUDGET_TENANT_DAILY = AssetKey(["marts", "fct_latency_budget_tenant_daily"])
P95_FIRST_AUDIO_CHECK_NAME = "p95_first_audio_within_profile_total"
# The metadata lists the worst breaches; the count says how many there are in all.
LISTED_BREACHES = 50


@dataclass(frozen=True)
class FirstAudioBreach:
    tenant_id: str
    business_date: date
    p95_ms: float
    budget_ms: int | None  # None when the day mixes profiles (e.g. two scenarios' budgets)
    p95_budget_ratio: float
    worst_segment_at_p95: str | None
    breach_owner: str | None


# With one budget in the day, p95_budget_ratio > 1 is exactly p95_ms > budget_ms; with mixed
# profiles it still compares every turn with its own first-audio total.
_BREACHES_SQL = """
    select
        tenant_id,
        business_date,
        p95_ms,
        budget_ms,
        p95_budget_ratio,
        worst_segment_at_p95,
        breach_owner,
    from {table}
    where segment = 'first_audio'
        and is_p95_over_budget
    order by business_date desc, p95_budget_ratio desc, tenant_id
"""


def first_audio_breaches(
    con: duckdb.DuckDBPyConnection, table: str = "marts.fct_latency_budget_tenant_daily"
) -> list[FirstAudioBreach]:
    """Tenant-days whose P95 first audio is over the profile total, newest and worst first."""
    rows = con.execute(_BREACHES_SQL.format(table=table)).fetchall()
    return [
        FirstAudioBreach(
            tenant_id=row[0],
            business_date=row[1],
            p95_ms=float(row[2]),
            budget_ms=None if row[3] is None else int(row[3]),
            p95_budget_ratio=float(row[4]),
            worst_segment_at_p95=row[5],
            breach_owner=row[6],
        )
        for row in rows
    ]


def breach_table_markdown(breaches: Sequence[FirstAudioBreach], limit: int) -> str:
    lines = [
        "| tenant | business date | P95 first audio (ms) | budget (ms) | P95 / budget "
        "| worst segment at P95 | breach owner |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for breach in breaches[:limit]:
        budget = "mixed" if breach.budget_ms is None else str(breach.budget_ms)
        lines.append(
            f"| {breach.tenant_id} | {breach.business_date.isoformat()} | {breach.p95_ms:.1f} "
            f"| {budget} | {breach.p95_budget_ratio:.3f} | {breach.worst_segment_at_p95 or '-'} "
            f"| {breach.breach_owner or '-'} |"
        )
    if len(breaches) > limit:
        lines.append(f"\n{len(breaches) - limit} more not listed.")
    return "\n".join(lines)


def first_audio_check_result(
    breaches: Sequence[FirstAudioBreach], limit: int = LISTED_BREACHES
) -> AssetCheckResult:
    """WARN when any tenant-day breaks its first-audio total; the metadata names them."""
    tenants = sorted({breach.tenant_id for breach in breaches})
    metadata: dict[str, object] = {
        "breached_tenant_days": len(breaches),
        "tenants": MetadataValue.json(tenants),
        "breaches": MetadataValue.json(
            [
                {
                    "tenant_id": breach.tenant_id,
                    "business_date": breach.business_date.isoformat(),
                    "p95_first_audio_ms": breach.p95_ms,
                    "budget_ms": breach.budget_ms,
                    "p95_budget_ratio": breach.p95_budget_ratio,
                    "worst_segment_at_p95": breach.worst_segment_at_p95,
                    "breach_owner": breach.breach_owner,
                }
                for breach in breaches[:limit]
            ]
        ),
    }
    if breaches:
        metadata["table"] = MetadataValue.md(breach_table_markdown(breaches, limit))
    return AssetCheckResult(
        passed=not breaches,
        severity=AssetCheckSeverity.WARN,
        metadata=metadata,
        description=(
            f"{len(breaches)} tenant-day(s) with P95 first audio over the profile total"
            if breaches
            else "every tenant-day's P95 first audio is within its profile total"
        ),
    )


def build_experience_checks(
    target: AssetKey | Sequence[str] | AssetsDefinition = LATENCY_BUDGET_TENANT_DAILY,
) -> list[AssetChecksDefinition]:
    """The experience checks, attached to `target`: the asset of fct_latency_budget_tenant_daily
    (its key, key path, or the dbt assets definition holding it; dagster-dbt names it
    ["marts", "fct_latency_budget_tenant_daily"] by default)."""
    if isinstance(target, AssetsDefinition):
        model_name = LATENCY_BUDGET_TENANT_DAILY.path[-1]
        matching = [key for key in target.keys if key.path[-1] == model_name]
        if not matching:
            raise ValueError(
                "the assets definition has no fct_latency_budget_tenant_daily asset; pass the "
                "asset key of that dbt model instead"
            )
        asset_key = matching[0]
    elif isinstance(target, AssetKey):
        asset_key = target
    else:
        asset_key = AssetKey(list(target))

    @asset_check(
        asset=asset_key,
        name=P95_FIRST_AUDIO_CHECK_NAME,
        description=(
            "Warns when a tenant-day's P95 first-audio latency is over the first-audio total of "
            "its latency budget profile (latency_budgets.yaml), naming the segment that owns it."
        ),
        blocking=False,
    )
    def p95_first_audio_within_profile_total(
        context: AssetCheckExecutionContext, warehouse: LedgerWarehouse
    ) -> AssetCheckResult:
        # dbt writes every mart to schema `marts`, whatever prefix the asset key carries.
        table = f"marts.{asset_key.path[-1]}"
        # Not read_only: a process that ran dbt in-process still holds the file read-write, and
        # DuckDB refuses a second, differently configured instance of it. Nothing is written.
        with warehouse.connect_marts() as con:
            breaches = first_audio_breaches(con, table)
        context.log.info(f"{len(breaches)} tenant-day(s) over their first-audio total")
        return first_audio_check_result(breaches)

    return [p95_first_audio_within_profile_total]
