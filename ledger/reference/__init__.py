"""Reference data (SPEC section 4): rate card, FX rates, price plans, latency budgets, aliases.

    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    write_reference_tables(con, ref)   # schema `reference`, one transaction

`load_reference` raises `ReferenceDataError` naming file, line, rule and fix for every problem.
"""

from ledger.core.vocabulary import METERS
from ledger.reference.errors import Problem, ReferenceDataError
from ledger.reference.loader import REFERENCE_FILES, load_reference
from ledger.reference.models import (
    FxRateRow,
    LatencyBudgetRow,
    ModelAliasRow,
    PricePlanRow,
    ProviderAliasRow,
    RateCardRow,
    ReferenceData,
)
from ledger.reference.tables import TABLES, write_reference_tables

__all__ = [
    "METERS",
    "REFERENCE_FILES",
    "TABLES",
    "FxRateRow",
    "LatencyBudgetRow",
    "ModelAliasRow",
    "PricePlanRow",
    "Problem",
    "ProviderAliasRow",
    "RateCardRow",
    "ReferenceData",
    "ReferenceDataError",
    "load_reference",
    "write_reference_tables",
]
