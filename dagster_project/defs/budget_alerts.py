"""Operating the budgets (SPEC 13) on every refresh: after the marts are published, the latency
SLOs' burn-rate alerts go to the owner teams (and the spend budgets' alerts to finance)."""

from dagster import AssetExecutionContext, AssetKey, MaterializeResult, asset

from dagster_project.defs.resources import LedgerWarehouse


def budget_alerts_asset(upstream: AssetKey):
    @asset(
        key=AssetKey(["ops", "budget_alerts"]),
        group_name="publish",
        deps=[upstream],
        description=(
            "Latency SLO burn-rate alerts to each segment's owner team, and spend budget alerts, "
            "evaluated on the newly published marts (ops.slo_alerts, ops.spend_budget_alerts, "
            "ops.deliveries)."
        ),
    )
    def budget_alerts(context: AssetExecutionContext, warehouse: LedgerWarehouse):
        from ledger.alerts.budgets import run_budget_alerts

        lines = run_budget_alerts(warehouse.settings(), echo=None)
        for line in lines:
            context.log.info(line)
        return MaterializeResult(metadata={"summary": "\n".join(lines)})

    return budget_alerts
