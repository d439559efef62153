"""FinOps interop (SPEC 10): the FOCUS export, rate cards from a price catalogue, provider bills."""
