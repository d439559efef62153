"""One build, from the raw layer to the published copy (SPEC 5 and 8).

`plan` decides in bulk SQL what a build recomputes (the incremental refresh), `transform` is how
dbt is invoked and the reference data it reads, `spark` what the dbt project needs on Apache Spark,
`dbt_child` the dbt process that dies with its build, and `publish` writes the readers' copy. The
orchestrator (dagster_project/) runs these steps; nothing here imports it.

The modules not named above:

- `build_record`: the last build's outcome, kept in the home for `ledger up`'s `/healthz`.
- `dbt_manifest`: the models of the last build, as dbt's manifest describes them.
- `publish_leftovers`: what a killed publish leaves behind, and the lock that keeps two publishes
  apart.
- `published_parts`: the Parquet parts of the published marts.
- `refreshed_weeks`: which parts of which marts an incremental build could have changed.
"""
