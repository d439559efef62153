"""Reference data: the finance-edited files, validated, become schema `reference`."""

from dagster import AssetExecutionContext, AssetKey, AssetSpec, MaterializeResult, multi_asset

from dagster_project.defs.resources import LedgerWarehouse
from ledger.pipeline.transform import prepare_reference

REFERENCE_TABLES = (
    "rate_card",
    "fx_rates",
    "price_plans",
    "latency_budgets",
    "provider_aliases",
    "model_aliases",
    "spend_budgets",
    "meta",
    "planning_settings",
)


@multi_asset(
    specs=[
        AssetSpec(
            AssetKey(["reference", table]),
            group_name="reference",
            description=f"reference.{table}, loaded from LEDGER_REFERENCE_DIR after validation.",
        )
        for table in REFERENCE_TABLES
    ],
    can_subset=False,
)
def reference_tables(context: AssetExecutionContext, warehouse: LedgerWarehouse):
    settings = warehouse.settings()
    with warehouse.connect() as con:
        # Raises ReferenceDataError naming file, line and rule: the run stops before dbt.
        prepare_reference(settings, con)
        counts = {
            table: con.execute(f"select count(*) from reference.{table}").fetchone()[0]
            for table in REFERENCE_TABLES
        }
    context.log.info(f"reference data from {settings.reference_dir}: {counts}")
    for table in REFERENCE_TABLES:
        yield MaterializeResult(
            asset_key=AssetKey(["reference", table]), metadata={"rows": counts[table]}
        )
