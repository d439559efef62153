"""Publishing: after a successful build, the boards' read-only copy is replaced atomically."""

from dagster import AssetExecutionContext, AssetKey, MaterializeResult, asset

from dagster_project.defs.resources import LedgerWarehouse
from ledger.pipeline.publish import publish


def published_marts_asset(upstream: list[AssetKey]):
    @asset(
        key=AssetKey(["published", "marts"]),
        group_name="publish",
        deps=upstream,
        description=(
            "Read-only views of the marts for the boards over Parquet parts (only the parts "
            "that changed are written), swapped in by an atomic rename only after every "
            "upstream model and test succeeded."
        ),
    )
    def published_marts(
        context: AssetExecutionContext, warehouse: LedgerWarehouse
    ) -> MaterializeResult:
        result = publish(warehouse.settings())
        context.log.info(
            f"published {result.tables} tables to {result.path}: {result.parts_written} parts "
            f"written, {result.parts_reused} unchanged and reused, {result.parts_removed} removed"
        )
        return MaterializeResult(
            metadata={
                "path": result.path,
                "tables": result.tables,
                "published_at": result.published_at.isoformat(),
                "parts_written": result.parts_written,
                "parts_reused": result.parts_reused,
                "parts_removed": result.parts_removed,
            }
        )

    return published_marts
