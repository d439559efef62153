"""Scheduled cost alerts (SPEC 7 and 10): `detection` finds anomalies per tenant-day against robust
baselines with their likely cause, `drift` compares the rate card with what providers report,
`delivery` sends Slack-compatible messages through one cooldown gate (webhook or file), `store`
keeps what was found and sent in `ops`, `figures` reads the marts they need, and `run` is
`ledger alerts run` and the daily Dagster job.

The modules not named above:

- `budgets`: one run of the budget alerts (SPEC 13).
- `routing`: where an alert goes: the owner team's destination (SPEC 13), else the default one.
- `slo`: latency SLO burn-rate alerts (SPEC 13).
- `spend`: spend budget alerts (SPEC 13).
"""
