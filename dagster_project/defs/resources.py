"""Resources: the installation's settings and its DuckDB warehouse, resolved at run time."""

import duckdb
from dagster import ConfigurableResource

from ledger.core.settings import Settings
from ledger.warehouse import connect


class LedgerWarehouse(ConfigurableResource):
    """The ledger's DuckDB warehouse, and the installation's settings, whole.

    `settings_json` is `Settings.as_json()` (`ledger build` passes its settings that way, see
    dagster_project/pipeline.py); unset, as under `dagster dev` or the daemon, the settings are
    read from the `LEDGER_*` environment when a run starts, never at import, which keeps the code
    location loadable anywhere.
    """

    settings_json: str | None = None
    # `ledger build --full-refresh`: recompute every model from all events.
    full_refresh: bool = False

    def settings(self) -> Settings:
        if self.settings_json:
            return Settings.from_json(self.settings_json)
        return Settings.from_env()

    def connect(self, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        return connect(self.settings().warehouse_path, read_only=read_only)

    def connect_marts(self) -> duckdb.DuckDBPyConnection:
        """The marts the last build wrote: the warehouse's own on DuckDB, views over the Parquet
        files Spark wrote on Spark (LEDGER_ENGINE=spark)."""
        settings = self.settings()
        if settings.engine == "spark":
            from ledger.pipeline.spark import connect_marts

            return connect_marts(settings)
        return self.connect()
