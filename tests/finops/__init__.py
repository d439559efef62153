"""FinOps: the FOCUS export, provider bills, rate-card imports and checks."""
