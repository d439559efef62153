"""Resources: the installation's settings and its DuckDB warehouse, resolved at run time."""

from pathlib import Path

import duckdb
from dagster import ConfigurableResource

from ledger.settings import Settings
from ledger.warehouse import connect


class LedgerWarehouse(ConfigurableResource):
    """The ledger's DuckDB warehouse. Unset fields fall back to the `LEDGER_*` environment.

    Reading the environment here, when a run starts, rather than at import keeps the code location
    loadable anywhere and lets tests point a run at a temporary home.
    """

    home: str | None = None
    reference_dir: str | None = None
    reporting_currency: str | None = None
    timezone: str | None = None
    engine: str | None = None  # LEDGER_ENGINE: duckdb or spark
    # `ledger build --full-refresh`: recompute every model from all events.
    full_refresh: bool = False

    def settings(self) -> Settings:
        base = Settings.from_env()
        overrides = {
            "home": self.home,
            "reference_dir": self.reference_dir,
            "reporting_currency": self.reporting_currency,
            "timezone": self.timezone,
            "engine": self.engine,
        }
        update = {
            key: Path(value).resolve() if key in ("home", "reference_dir") else value
            for key, value in overrides.items()
            if value
        }
        return Settings.model_validate({**base.model_dump(), **update})

    def connect(self, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        return connect(self.settings().warehouse_path, read_only=read_only)

    def connect_marts(self) -> duckdb.DuckDBPyConnection:
        """The marts the last build wrote: the warehouse's own on DuckDB, views over the Parquet
        files Spark wrote on Spark (LEDGER_ENGINE=spark)."""
        settings = self.settings()
        if settings.engine == "spark":
            from ledger.spark import connect_marts

            return connect_marts(settings)
        return self.connect()
