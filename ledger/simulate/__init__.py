"""Seeded, reproducible simulation of metering-contract events (SPEC sections 3 and 8)."""

from ledger.simulate.simulation import SimulationSummary, simulate

__all__ = ["SimulationSummary", "simulate"]
