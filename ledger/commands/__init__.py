"""The `ledger` command and what sits above the orchestrator and the boards. These modules may
import `dagster_project` and `dashboards`; nothing below them does.

- `cli`: the command itself, a module per command group (its own docstring lists them);
- `build`: runs the Dagster build job in-process (`ledger build`, `ledger demo`);
- `serve`: the Streamlit boards on the published copy (`ledger serve`);
- `up`: every service of an installation, started and supervised as one (`ledger up`);
- `instance`: the persistent Dagster instance `ledger up` runs;
- `pipeline_metrics`: the pipeline's Prometheus metrics on `ledger up`'s pipeline port;
- `backup`: `ledger backup` and `ledger restore`;
- `budget_review`: `ledger budgets review`, a proposed latency budgets file on recorded traffic;
- `whatif`: `ledger whatif`, a past period repriced in a scratch copy.

The benchmarks live outside the package, in `benchmarks/` (`make bench`).
"""
