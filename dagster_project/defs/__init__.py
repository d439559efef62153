"""One module per area, each exposing its own Dagster definitions."""
