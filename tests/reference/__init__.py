"""Reference data: rate card, price plans, FX rates, and their coverage at build time."""
