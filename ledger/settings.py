"""Settings: read from the environment once, at the edge, with defaults that work out of the box.

| variable                    | default                         | meaning                                  |
|-----------------------------|---------------------------------|------------------------------------------|
| `LEDGER_HOME`               | `<repo>/data/home`              | warehouse, landing, published copy, reports |
| `LEDGER_REFERENCE_DIR`      | `<repo>/data/reference`         | rate card, FX, price plans, latency budgets |
| `LEDGER_REPORTING_CURRENCY` | `CNY`                           | currency every amount is converted to    |
| `LEDGER_TIMEZONE`           | `Asia/Shanghai`                 | business dates and ISO weeks             |
| `LEDGER_WEBHOOK_URL`        | unset                           | Slack-compatible alert webhook           |
| `LEDGER_QUARANTINE_RETENTION_DAYS` | `30`                     | days a quarantined line keeps its raw text |
| `LEDGER_ENGINE`             | `duckdb`                        | engine dbt runs on: `duckdb` or `spark`  |
| `LEDGER_ACCESS_FILE`        | `$LEDGER_HOME/access.yaml`      | who may read the boards (ledger/access.py) |
"""

from __future__ import annotations

import os
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, field_validator

REPO_ROOT = Path(__file__).resolve().parent.parent
DBT_PROJECT_DIR = REPO_ROOT / "dbt"
# The engines the dbt project runs on (LEDGER_ENGINE); duckdb is the embedded default.
ENGINES = ("duckdb", "spark")


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    home: Path
    reference_dir: Path
    reporting_currency: str = "CNY"
    timezone: str = "Asia/Shanghai"
    webhook_url: str | None = None
    # Quarantined lines can hold free text (a transcript, a card number): their raw text is kept
    # this many days after quarantine, then set NULL (reason, counts and location stay).
    quarantine_retention_days: int = 30
    # The engine the dbt project runs on (dbt target `local` or `spark`, see dbt/profiles.yml):
    # DuckDB, embedded, or Apache Spark (a local pyspark `local[2]`; a cluster is a profile change).
    engine: str = "duckdb"
    # Who may read the boards and which tenants each sees (ledger/access.py); None: the default
    # place, `home/access.yaml`.
    access_file: Path | None = None

    @field_validator("quarantine_retention_days")
    @classmethod
    def _retention_not_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError(
                f"LEDGER_QUARANTINE_RETENTION_DAYS must be a whole number of days >= 0, got {value}"
            )
        return value

    @field_validator("engine")
    @classmethod
    def _engine_is_known(cls, value: str) -> str:
        if value not in ENGINES:
            raise ValueError(f"LEDGER_ENGINE must be one of {', '.join(ENGINES)}, got {value!r}")
        return value

    @field_validator("reporting_currency")
    @classmethod
    def _currency_is_iso_code(cls, value: str) -> str:
        if len(value) != 3 or not value.isalpha() or not value.isupper():
            raise ValueError(
                f"LEDGER_REPORTING_CURRENCY must be a 3-letter ISO code such as CNY, got {value!r}"
            )
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone_exists(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(
                f"LEDGER_TIMEZONE must be an IANA zone such as Asia/Shanghai, got {value!r}"
            ) from exc
        return value

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            home=Path(env.get("LEDGER_HOME") or REPO_ROOT / "data" / "home").resolve(),
            reference_dir=Path(
                env.get("LEDGER_REFERENCE_DIR") or REPO_ROOT / "data" / "reference"
            ).resolve(),
            reporting_currency=env.get("LEDGER_REPORTING_CURRENCY") or "CNY",
            timezone=env.get("LEDGER_TIMEZONE") or "Asia/Shanghai",
            webhook_url=env.get("LEDGER_WEBHOOK_URL") or None,
            quarantine_retention_days=env.get("LEDGER_QUARANTINE_RETENTION_DAYS") or 30,
            engine=env.get("LEDGER_ENGINE") or "duckdb",
            access_file=Path(env["LEDGER_ACCESS_FILE"]).resolve()
            if env.get("LEDGER_ACCESS_FILE")
            else None,
        )

    # Everything the pipeline writes lives under `home`, so one variable moves a whole installation.
    @property
    def warehouse_path(self) -> Path:
        return self.home / "warehouse.duckdb"

    @property
    def landing_dir(self) -> Path:
        return self.home / "landing"

    @property
    def published_path(self) -> Path:
        """The read-only copy of the marts the boards read; replaced atomically after each build."""
        # Not "marts.duckdb": a file's stem is its catalog name and would clash with schema `marts`.
        return self.home / "published" / "boards.duckdb"

    @property
    def access_path(self) -> Path:
        """The boards' access file (sign-in mode and each reader's tenants), present or not."""
        return self.access_file or self.home / "access.yaml"

    @property
    def reports_dir(self) -> Path:
        return self.home / "reports"

    @property
    def alerts_dir(self) -> Path:
        return self.home / "alerts"

    @property
    def dbt_target_dir(self) -> Path:
        # Per-home dbt artefacts, so two homes (tests, demo) never share a target folder.
        return self.home / "dbt_target"

    @property
    def spark_dir(self) -> Path:
        """LEDGER_ENGINE=spark: the sources exported for Spark and the tables it writes."""
        return self.home / "spark"

    def ensure_dirs(self) -> None:
        for path in (self.home, self.landing_dir, self.published_path.parent, self.reports_dir):
            path.mkdir(parents=True, exist_ok=True)
