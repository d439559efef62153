"""Dagster code location of the voice cost ledger: `dagster dev` shows everything in definitions.py."""
