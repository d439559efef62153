"""Reference data (SPEC section 4): rate card, FX rates, price plans, latency budgets, aliases.

    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    write_reference_tables(con, ref)   # schema `reference`, one transaction

`load_reference` raises `ReferenceDataError` naming file, line, rule and fix for every problem.

The modules not named above:

- `csv_files`: reading one reference CSV into validated rows, with every problem located by line.
- `errors`: what is wrong with the reference files, said so that finance can fix it without reading
  code.
- `latency`: reading `latency_budgets.yaml`: profiles, which scenario uses which, and tenant
  overrides.
- `loader`: `load_reference`: read, validate and cross-check the reference files (SPEC section 4).
- `models`: reference data rows (SPEC section 4): rate card, FX rates, price plans, latency budgets.
- `planning`: `planning.yaml`: capacity planning settings (SPEC 11) -> table
  `reference.planning_settings`.
- `rules`: the rules every reference value must follow (SPEC section 4), as pydantic annotated
  types.
- `tables`: `write_reference_tables`: the validated reference data as tables in schema `reference`.
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
