"""One module per area, each exposing its own Dagster definitions.

The modules not named above:

- `build_outcome`: the build's outcome recorded in the home as its steps end (job hooks).
- `budget_alerts`: operating the budgets (SPEC 13) on every refresh.
- `experience_checks`: asset checks on the experience marts: operational rules that warn rather than
  fail a build.
- `ingest`: ingest: the landing folder becomes `raw.events`.
- `ledger_dbt`: the dbt project (staging -> intermediate -> marts) as Dagster assets through
  dagster-dbt.
- `operations`: scheduled operations: daily cost anomaly alerts.
- `publish`: publishing: after a successful build, the boards' read-only copy is replaced
  atomically.
- `reference`: reference data: the finance-edited files, validated, become schema `reference`.
- `refresh`: the refresh plan before dbt and its commit after publishing (issue 11).
- `resources`: resources: the installation's settings and its DuckDB warehouse, resolved at run
  time.
"""
