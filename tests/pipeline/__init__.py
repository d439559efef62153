"""The build: the dbt ledger models, the Dagster job, publishing, incremental refresh, Spark."""
