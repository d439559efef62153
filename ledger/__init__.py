"""The voice session cost ledger: a package per room, imports pointing down (`core` at the
bottom, `commands` at the top; tests/test_architecture.py keeps them free of circles).

Its packages:

- `alerts`: scheduled cost alerts (SPEC 7 and 10).
- `collect`: collectors: what real voice stacks already emit, turned into metering contract events
  (SPEC 9).
- `commands`: the `ledger` command and what sits above the orchestrator and the boards.
- `contract`: the metering contract (SPEC 3 and 9), once.
- `core`: the ground floor: what every other room imports and that imports nothing of the ledger's.
- `finops`: FinOps interop (SPEC 10): the FOCUS export, rate cards from a price catalogue, provider
  bills.
- `ingest`: ingest landing files into the warehouse's raw layer (SPEC 3).
- `pipeline`: one build, from the raw layer to the published copy (SPEC 5 and 8).
- `reference`: reference data (SPEC section 4): rate card, FX rates, price plans, latency budgets,
  aliases.
- `report`: the weekly margin review (SPEC 7).
- `serving`: what readers open: the published copy.
- `simulate`: seeded, reproducible simulation of metering-contract events (SPEC sections 3 and 8).
- `warehouse`: the DuckDB warehouse file.
"""
