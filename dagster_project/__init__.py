"""Dagster code location of the voice cost ledger: `dagster dev` shows everything in definitions.py.

The modules not named above:

- `definitions`: the code location: every area's definitions, assembled.
- `pipeline`: `ledger build` for Dagster: the job `build_ledger` run in-process on given settings.
- `defs`: one module per area, each exposing its own Dagster definitions.
"""
