"""The code location: every area's definitions, assembled. `dagster dev` loads `defs` lazily;
tests and `ledger build` call `load_definitions()`. The dbt manifest is prepared here, when the
definitions are loaded, not when a module is imported."""

from functools import cache

from dagster import (
    AssetSelection,
    Definitions,
    define_asset_job,
    definitions,
    in_process_executor,
)

from dagster_project.defs.budget_alerts import budget_alerts_asset
from dagster_project.defs.build_outcome import build_outcome_hooks
from dagster_project.defs.experience_checks import build_experience_checks
from dagster_project.defs.ingest import landing_sensor_for, raw_events
from dagster_project.defs.ledger_dbt import build_dbt_assets, dbt_resource, prepare_manifest
from dagster_project.defs.operations import operations_definitions
from dagster_project.defs.publish import published_marts_asset
from dagster_project.defs.reference import reference_tables
from dagster_project.defs.refresh import refresh_plan, refresh_state_asset
from dagster_project.defs.resources import LedgerWarehouse

BUILD_JOB_NAME = "build_ledger"


@cache
def load_definitions() -> Definitions:
    ledger_dbt_models = build_dbt_assets(prepare_manifest())
    published_marts = published_marts_asset(upstream=list(ledger_dbt_models.keys))
    refresh_state = refresh_state_asset(upstream=[published_marts.key])
    budget_alerts = budget_alerts_asset(upstream=published_marts.key)
    build_ledger = define_asset_job(
        BUILD_JOB_NAME,
        selection=AssetSelection.groups("ingest", "reference", "refresh", "publish")
        | AssetSelection.assets(ledger_dbt_models),
        description=(
            "Ingest new landing files, reload reference data, plan the refresh, dbt build, "
            "publish the marts, commit the refresh."
        ),
        hooks=build_outcome_hooks(published_marts.op.name),
    )
    operation_jobs, operation_schedules, freshness_checks = operations_definitions()
    return Definitions(
        assets=[
            raw_events,
            reference_tables,
            refresh_plan,
            ledger_dbt_models,
            published_marts,
            refresh_state,
            budget_alerts,
        ],
        asset_checks=[*build_experience_checks(ledger_dbt_models), *freshness_checks],
        jobs=[build_ledger, *operation_jobs],
        schedules=operation_schedules,
        sensors=[landing_sensor_for(BUILD_JOB_NAME)],
        resources={"warehouse": LedgerWarehouse(), "dbt": dbt_resource()},
        # Every step writes the one DuckDB warehouse, which takes one writer: a run's steps go one
        # after another in the run's own process (Dagster's default, a process per step, had the
        # ingest and the reference load fail on each other's lock under the daemon), as
        # `ledger build` runs them in-process.
        executor=in_process_executor,
    )


@definitions
def defs() -> Definitions:
    return load_definitions()
