"""FinOps interop (SPEC 10): the FOCUS export, rate cards from a price catalogue, provider bills.

The modules not named above:

- `focus`: `ledger export focus`: the ledger's cost as a FOCUS 1.0 dataset, from the published copy.
- `genai_prices`: prices from a maintained catalogue: pydantic's `genai-prices`, whose data ships in
  the package.
- `price_map`: voice prices from LiteLLM's published price map
  (`model_prices_and_context_window.json`).
- `provider_costs`: `ledger reconcile import FILE`: a provider's invoice or usage export, for the
  reconciliation.
- `rates`: `ledger rates import|check`: rate-card rows proposed from the price catalogues, reviewed,
  merged.
- `spend_budgets`: spend budgets (SPEC 13).
"""
