"""The code location: every area's definitions, assembled. `dagster dev` loads this module."""


from dagster import AssetSelection, Definitions, define_asset_job

from dagster_project.defs.ingest import landing_sensor_for, raw_events
from dagster_project.defs.ledger_dbt import dbt_resource, ledger_dbt_models
from dagster_project.defs.publish import published_marts_asset
from dagster_project.defs.reference import reference_tables
from dagster_project.defs.resources import LedgerWarehouse

BUILD_JOB_NAME = "build_ledger"

published_marts = published_marts_asset(upstream=list(ledger_dbt_models.keys))

build_ledger = define_asset_job(
    BUILD_JOB_NAME,
    selection=AssetSelection.groups("ingest", "reference", "publish")
    | AssetSelection.assets(ledger_dbt_models),
    description="Ingest new landing files, reload reference data, dbt build, publish the marts.",
)

defs = Definitions(
    assets=[raw_events, reference_tables, ledger_dbt_models, published_marts],
    jobs=[build_ledger],
    sensors=[landing_sensor_for(BUILD_JOB_NAME)],
    resources={"warehouse": LedgerWarehouse(), "dbt": dbt_resource()},
)
