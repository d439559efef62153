"""Settings: one object, read from the environment once at the edge, handed whole to every consumer.

| variable                    | default                         | meaning                                  |
|-----------------------------|---------------------------------|------------------------------------------|
| `LEDGER_HOME`               | `<repo>/data/home`              | warehouse, landing, published copy, reports |
| `LEDGER_REFERENCE_DIR`      | `<repo>/data/reference`         | rate card, FX, price plans, latency budgets |
| `LEDGER_REPORTING_CURRENCY` | `CNY`                           | currency every amount is converted to    |
| `LEDGER_TIMEZONE`           | `Asia/Shanghai`                 | business dates and ISO weeks             |
| `LEDGER_WEBHOOK_URL`        | unset                           | Slack-compatible alert webhook           |
| `LEDGER_QUARANTINE_RETENTION_DAYS` | `30`                     | days a quarantined line keeps its raw text |
| `LEDGER_ENGINE`             | `duckdb`                        | engine dbt runs on: `duckdb` or `spark`  |
| `LEDGER_SPARK_REMOTE`       | unset (a local pyspark)         | `sc://host:port`: Spark runs on the Spark Connect server there (docs/spark.md) |
| `LEDGER_DBT_UNIT_TESTS`     | unset (on DuckDB only)          | whether a full build runs the dbt unit tests: `true` also on Spark (CI), `false` nowhere |
| `LEDGER_BUILD_MEMORY_LIMIT` | `50%`                           | DuckDB's memory in a build (`8GB`, `50%` of the machine); beyond it the build spills to `$LEDGER_HOME/warehouse.duckdb.tmp` |
| `LEDGER_ACCESS_FILE`        | `$LEDGER_HOME/access.yaml`      | who may read the boards (ledger/serving/access_file.py) |
| `LEDGER_PRICE_MAP`          | the copy `make env` keeps       | LiteLLM's price map for `ledger rates import` |
| `LEDGER_SIGN_IN_REQUIRED`   | `false`                         | the boards deny everyone while the access file is missing (`ledger serve` sets it when it starts with one) |
| `LEDGER_BOARDS_URL`         | `http://127.0.0.1:8501`         | where readers reach the boards: the base of every deep link an alert or review carries |
| `LEDGER_ALERTS_CRON`        | `0 6 * * *`                     | when the daily cost alerts run (cron, in `LEDGER_TIMEZONE`) |
| `LEDGER_REVIEW_CRON`        | `0 7 * * 1`                     | when the weekly margin review is written (cron, in `LEDGER_TIMEZONE`) |
| `LEDGER_DAGSTER_POSTGRES_URL` | unset                         | the Dagster instance's storage in PostgreSQL (unset: SQLite under the home); a secret |
| `LEDGER_SLO_WINDOW_DAYS`    | `28`                            | the latency SLOs' rolling window (SPEC 13) |
| `LEDGER_BURN_RATE_RULES`    | `page:14.4:1h:5m page:6:6h:30m ticket:1:3d:6h` | multi-window burn-rate alerts |
| `LEDGER_OWNER_WEBHOOKS`     | unset                           | per owner team, its alert webhook: `audio=URL inference=URL` |
| `LEDGER_CLOCK_SKEW_MINUTES` | `5`                             | how far a turn.latency segment's times may lie from its occurred_at before the row is quarantined as `clock_skew` |
| `LEDGER_MAX_LINE_BYTES`     | `2000000`                       | the longest landing line: a longer one is quarantined by itself (`line_too_long`) and the collector refuses it (413) |

Each default is written once, on its field below; `ENVIRONMENT` names each field's variable. The
object travels whole: `as_json()` / `from_json()` to the Dagster resource (one config string),
`as_environment()` to a child process (the boards, a benchmark's builds), `dbt_vars()`
(ledger/pipeline/transform.py) to dbt. Nothing below the edge reads a `LEDGER_*` variable again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, field_validator

from ledger.core.slo_rules import DEFAULT_BURN_RATE_RULES, parse_burn_rate_rules

REPO_ROOT = Path(__file__).resolve().parents[2]
DBT_PROJECT_DIR = REPO_ROOT / "dbt"
# The engines the dbt project runs on (LEDGER_ENGINE); duckdb is the embedded default.
ENGINES = ("duckdb", "spark")


# Each setting's environment variable: the one mapping both ways (`from_env`, `as_environment`).
ENVIRONMENT: dict[str, str] = {
    "home": "LEDGER_HOME",
    "reference_dir": "LEDGER_REFERENCE_DIR",
    "reporting_currency": "LEDGER_REPORTING_CURRENCY",
    "timezone": "LEDGER_TIMEZONE",
    "webhook_url": "LEDGER_WEBHOOK_URL",
    "quarantine_retention_days": "LEDGER_QUARANTINE_RETENTION_DAYS",
    "engine": "LEDGER_ENGINE",
    "spark_remote": "LEDGER_SPARK_REMOTE",
    "dbt_unit_tests": "LEDGER_DBT_UNIT_TESTS",
    "build_memory_limit": "LEDGER_BUILD_MEMORY_LIMIT",
    "access_file": "LEDGER_ACCESS_FILE",
    "price_map": "LEDGER_PRICE_MAP",
    "sign_in_required": "LEDGER_SIGN_IN_REQUIRED",
    "boards_url": "LEDGER_BOARDS_URL",
    "alerts_cron": "LEDGER_ALERTS_CRON",
    "review_cron": "LEDGER_REVIEW_CRON",
    "dagster_postgres_url": "LEDGER_DAGSTER_POSTGRES_URL",
    "slo_window_days": "LEDGER_SLO_WINDOW_DAYS",
    "burn_rate_rules": "LEDGER_BURN_RATE_RULES",
    "owner_webhooks": "LEDGER_OWNER_WEBHOOKS",
    "clock_skew_minutes": "LEDGER_CLOCK_SKEW_MINUTES",
    "max_line_bytes": "LEDGER_MAX_LINE_BYTES",
}

# SPEC 3: how far a segment's own times may lie from the event's occurred_at (the default of
# `Settings.clock_skew_minutes`, and of the validators used without settings).
DEFAULT_CLOCK_SKEW_MINUTES = 5

# A DuckDB memory_limit: a whole or decimal number of bytes in a unit, or a percentage of memory.
_MEMORY_SIZE = re.compile(r"(?P<number>\d+(\.\d+)?)(?P<unit>[KMGT]i?B|%)", re.IGNORECASE)

# LEDGER_MAX_LINE_BYTES's default, DuckDB's own line limit (also the ingest's when it is given none).
DEFAULT_MAX_LINE_BYTES = 2_000_000
# The smallest LEDGER_MAX_LINE_BYTES: room for one event with long identifiers.
MIN_LINE_BYTES = 4096

# Settings that hold credentials: they travel only through the environment, never in stored config.
SECRET_FIELDS = ("webhook_url", "dagster_postgres_url", "owner_webhooks")


class Settings(BaseModel):
    # hide_input_in_errors: a refused value may be a secret (a URL with its password).
    model_config = ConfigDict(frozen=True, hide_input_in_errors=True)

    home: Path = REPO_ROOT / "data" / "home"
    reference_dir: Path = REPO_ROOT / "data" / "reference"
    reporting_currency: str = "CNY"
    timezone: str = "Asia/Shanghai"
    webhook_url: str | None = None
    # Quarantined lines can hold free text (a transcript, a card number): their raw text is kept
    # this many days after quarantine, then set NULL (reason, counts and location stay).
    quarantine_retention_days: int = 30
    # The engine the dbt project runs on (dbt target `local` or `spark`, see dbt/profiles.yml):
    # DuckDB, embedded, or Apache Spark (a local pyspark `local[2]`; a cluster is a profile change).
    engine: str = "duckdb"
    # LEDGER_ENGINE=spark: the Spark Connect server (`sc://host:port`) in front of a cluster that
    # runs the dbt project (dbt target `spark_connect`); None: a local pyspark in dbt's process.
    spark_remote: str | None = None
    # Whether a full build runs the dbt unit tests (model logic on fixed inputs, not data). None:
    # on DuckDB, where they cost about a second, and not on Spark, where they cost a few seconds
    # each (dbt's advice: unit tests in development and CI, not in production builds); the Spark
    # tests ask for them (`true`), so every dispatched Spark macro is still unit-tested on Spark.
    dbt_unit_tests: bool | None = None
    # DuckDB's memory in a build (dbt's connections): a size (`8GB`, `512MB`) or a share of the
    # machine (`50%`). DuckDB's own default, 80%, is what a 21.5M-event month's build took before
    # the kernel killed it beside the boards and a Spark JVM; capped, the large joins and sorts
    # spill to `home/warehouse.duckdb.tmp` instead (docs/benchmarks.md).
    build_memory_limit: str = "50%"
    # Who may read the boards and which tenants each sees (ledger/serving/access_file.py); None: the default
    # place, `home/access.yaml`.
    access_file: Path | None = None
    # LiteLLM's price map `ledger rates import` reads (ledger/finops/price_map.py); None: the copy
    # `make env` keeps for the pinned version.
    price_map: Path | None = None
    # A sign-in deployment (`ledger serve` started with an access file): should the file go
    # missing, the boards deny every request rather than fall back to the local operator.
    sign_in_required: bool = False
    # Where readers reach the boards (behind a proxy: its public address): the base of the deep
    # links alerts and reviews carry (ledger/serving/links.py). The default is `ledger serve`'s.
    boards_url: str = "http://127.0.0.1:8501"
    # When the scheduled operations run (dagster_project/defs/operations.py), in `timezone`: the
    # daemon reads them when it loads the code location (a test fires them within a minute).
    alerts_cron: str = "0 6 * * *"
    review_cron: str = "0 7 * * 1"
    # The Dagster instance's run, event and schedule storage in PostgreSQL
    # (postgresql://user:password@host:port/db); None: SQLite under `home/dagster`. It holds a
    # password, so the instance file names the variable, never its value (ledger/commands/instance.py).
    dagster_postgres_url: str | None = None
    # SPEC 13 latency SLOs: the rolling window, and the multi-window burn-rate rules
    # (ledger/core/slo_rules.py), both handed to dbt as vars.
    slo_window_days: int = 28
    burn_rate_rules: str = DEFAULT_BURN_RATE_RULES
    # Where each owner team's SLO alerts go: `team=URL` pairs separated by spaces (a URL holds no
    # space). A secret like LEDGER_WEBHOOK_URL; a team without one gets the default destination.
    owner_webhooks: str | None = None
    # SPEC 3 clock sanity: a turn.latency whose started_at or ended_at lies further than this from
    # its occurred_at is quarantined as `clock_skew` at ingest, since one device's clock must not
    # move every tenant's SLO windows.
    clock_skew_minutes: int = DEFAULT_CLOCK_SKEW_MINUTES
    # The longest line a landing file may hold, in bytes (without its line break). DuckDB's text
    # reader refuses a whole file for one longer line; the ingest then quarantines that line by
    # itself (`line_too_long`, never read whole into memory) and the rest of the file goes in.
    # The collector refuses a batch holding a longer event (413), so what it acknowledges fits.
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    @field_validator("home", "reference_dir", "access_file", "price_map")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        # Resolved once, here: a relative path means the same folder to every consumer.
        return value.resolve() if value is not None else None

    @field_validator("quarantine_retention_days")
    @classmethod
    def _retention_not_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError(
                f"LEDGER_QUARANTINE_RETENTION_DAYS must be a whole number of days >= 0, got {value}"
            )
        return value

    @field_validator("build_memory_limit")
    @classmethod
    def _memory_is_a_size(cls, value: str) -> str:
        compact = value.replace(" ", "")
        size = _MEMORY_SIZE.fullmatch(compact)
        # Zero is a size DuckDB takes, and a build that can hold nothing in memory.
        if (
            size is None
            or float(size["number"]) == 0
            or (size["unit"] == "%" and float(size["number"]) > 100)
        ):
            raise ValueError(
                "LEDGER_BUILD_MEMORY_LIMIT must be a size above zero such as 8GB or 512MB, or a "
                f"share of the machine such as 50%, got {value!r}"
            )
        return compact

    @field_validator("boards_url")
    @classmethod
    def _boards_url_is_http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")) or "?" in value or "#" in value:
            raise ValueError(
                "LEDGER_BOARDS_URL must be the boards' base address such as "
                f"https://ledger.example.com/boards (http or https, no query), got {value!r}"
            )
        return value.rstrip("/")

    @field_validator("alerts_cron", "review_cron")
    @classmethod
    def _cron_has_five_fields(cls, value: str) -> str:
        if len(value.split()) != 5:
            raise ValueError(
                "LEDGER_ALERTS_CRON and LEDGER_REVIEW_CRON take a five-field cron expression "
                f"such as '0 6 * * *', got {value!r}"
            )
        return " ".join(value.split())

    @field_validator("dagster_postgres_url")
    @classmethod
    def _postgres_url_names_the_driver(cls, value: str | None) -> str | None:
        # dagster-postgres drives PostgreSQL through SQLAlchemy with psycopg2 (its dependency);
        # SQLAlchemy reads a bare postgresql:// as psycopg 3, which is not installed.
        if value is None:
            return None
        scheme, found, rest = value.partition("://")
        if not found or scheme not in ("postgres", "postgresql", "postgresql+psycopg2"):
            # The value holds a password: never repeated in an error message.
            raise ValueError(
                "LEDGER_DAGSTER_POSTGRES_URL must be a URL such as "
                "postgresql://user:password@host:5432/database (its value is not shown)"
            )
        return f"postgresql+psycopg2://{rest}"

    @field_validator("slo_window_days")
    @classmethod
    def _window_positive(cls, value: int) -> int:
        if not 1 <= value <= 366:
            raise ValueError(f"LEDGER_SLO_WINDOW_DAYS must be 1 to 366 days, got {value}")
        return value

    @field_validator("clock_skew_minutes")
    @classmethod
    def _skew_positive(cls, value: int) -> int:
        if not 1 <= value <= 1440:
            raise ValueError(f"LEDGER_CLOCK_SKEW_MINUTES must be 1 to 1440 minutes, got {value}")
        return value

    @field_validator("burn_rate_rules")
    @classmethod
    def _rules_parse(cls, value: str) -> str:
        parse_burn_rate_rules(value)
        return value

    @field_validator("owner_webhooks")
    @classmethod
    def _owner_pairs(cls, value: str | None) -> str | None:
        if value is not None:
            for pair in value.split():
                team, sep, url = pair.partition("=")
                if not sep or not team or not url:
                    raise ValueError(
                        "LEDGER_OWNER_WEBHOOKS must be team=URL pairs separated by spaces (such "
                        "as audio=https://hooks.example.com/...); one piece is not (the value is "
                        "not shown, it holds secrets)"
                    )
        return value

    @property
    def owner_webhook_urls(self) -> dict[str, str]:
        """Each owner team's SLO alert webhook (LEDGER_OWNER_WEBHOOKS)."""
        pairs = (pair.partition("=") for pair in (self.owner_webhooks or "").split())
        return {team: url for team, _, url in pairs}

    @field_validator("max_line_bytes")
    @classmethod
    def _line_limit_holds_an_event(cls, value: int) -> int:
        if value < MIN_LINE_BYTES:
            raise ValueError(
                f"LEDGER_MAX_LINE_BYTES must be at least {MIN_LINE_BYTES} bytes (one event), "
                f"got {value}"
            )
        return value

    @field_validator("engine")
    @classmethod
    def _engine_is_known(cls, value: str) -> str:
        if value not in ENGINES:
            raise ValueError(f"LEDGER_ENGINE must be one of {', '.join(ENGINES)}, got {value!r}")
        return value

    @field_validator("spark_remote")
    @classmethod
    def _spark_remote_is_connect_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("sc://"):
            raise ValueError(
                "LEDGER_SPARK_REMOTE must be a Spark Connect address such as "
                f"sc://spark-connect.internal:15002, got {value!r}"
            )
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
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings the `LEDGER_*` variables of `environ` (default: this process's) name; an
        unset or empty variable leaves its field's default."""
        env = os.environ if environ is None else environ
        given = {field: env[name] for field, name in ENVIRONMENT.items() if env.get(name)}
        return cls.model_validate(given)

    def as_environment(self) -> dict[str, str]:
        """The `LEDGER_*` variables that make `from_env` give these settings back, for a child
        process (unset fields are left out, so the child's default is the same one)."""
        values = self.model_dump(mode="json")
        return {
            name: str(values[field]).lower()
            if isinstance(values[field], bool)
            else str(values[field])
            for field, name in ENVIRONMENT.items()
            if values[field] is not None
        }

    def as_json(self) -> str:
        """The whole object but its secrets, as one string: the Dagster resource's config. Dagster
        keeps a run's config in its run storage, and secrets are never stored (SPEC 12)."""
        return self.model_dump_json(exclude=set(SECRET_FIELDS))

    @classmethod
    def from_json(cls, text: str, environ: Mapping[str, str] | None = None) -> Settings:
        """`as_json`'s settings, with the secrets taken from the environment where they live."""
        secrets = cls.from_env(environ).model_dump(include=set(SECRET_FIELDS))
        return cls.model_validate({**cls.model_validate_json(text).model_dump(), **secrets})

    @property
    def runs_dbt_unit_tests(self) -> bool:
        """Whether a full build of this installation runs the dbt unit tests."""
        if self.dbt_unit_tests is None:
            return self.engine == "duckdb"
        return self.dbt_unit_tests

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
    def dagster_home(self) -> Path:
        """`ledger up`'s persistent Dagster instance (its `dagster.yaml`, SQLite storage, logs)."""
        return self.home / "dagster"

    @property
    def logs_dir(self) -> Path:
        """`ledger up`'s log files, one per service."""
        return self.home / "logs"

    @property
    def spark_dir(self) -> Path:
        """LEDGER_ENGINE=spark: the sources exported for Spark and the tables it writes."""
        return self.home / "spark"

    def ensure_dirs(self) -> None:
        for path in (self.home, self.landing_dir, self.published_path.parent, self.reports_dir):
            path.mkdir(parents=True, exist_ok=True)
