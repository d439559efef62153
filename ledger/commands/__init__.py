"""The `ledger` command and what sits above the orchestrator and the boards: `cli` (every
subcommand), `build` (runs the Dagster build job in-process), `serve` (the Streamlit boards),
`whatif` (a past period repriced in a scratch copy).
The benchmarks live outside the package, in `benchmarks/` (`make bench`).
These modules may import `dagster_project` and `dashboards`; nothing below them does.
"""
