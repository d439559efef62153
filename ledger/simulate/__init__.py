"""Seeded, reproducible simulation of metering-contract events (SPEC sections 3 and 8).

The modules not named above:

- `defects`: the imperfections of real delivery: exact duplicates and bad rows.
- `generator`: vectorised generation of one simulated period of metering events.
- `layout`: the column layout of simulated events, derived from the contract models (never restated
  here).
- `replay`: `ledger replay`: recorded sessions re-emitted as contract events (SPEC 11).
- `scenario`: what the simulator simulates: tenants, providers and traffic shapes (the shared
  catalogue).
- `shadow`: shadow decisions for the simulator (SPEC 11).
- `simulation`: `simulate`: a seeded, reproducible month of metering events written as landing
  files.
- `writer`: landing files: one per (day, source), written atomically.
"""

from ledger.simulate.simulation import SimulationSummary, simulate

__all__ = ["SimulationSummary", "simulate"]
