"""Which parts of which marts an incremental build could have changed: only those are summarised
again when publishing (the others are the ones already published)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import duckdb

from ledger.core.settings import Settings
from ledger.pipeline.dbt_manifest import built_models
from ledger.pipeline.published_parts import PUBLISHED_SCHEMA, week_label


@dataclass(frozen=True)
class RefreshedWeeks:
    """What an incremental build could have changed in the marts (`refreshed_weeks`)."""

    keys: dict[str, str]  # incremental mart -> its refresh key (session_id or a date column)
    weeks: frozenset[str]  # the plan's ISO weeks, and the part of rows without a date
    around: frozenset[str]  # the same with a week either side

    def parts(self, table: str, column: str | None) -> set[str] | None:
        """The parts of `table`, split by `column`, that may have changed (None: any)."""
        key = self.keys.get(table)
        if key is None or column is None:
            return None
        return set(self.weeks if key.endswith("session_id") or key == column else self.around)


def refreshed_weeks(con: duckdb.DuckDBPyConnection, settings: Settings) -> RefreshedWeeks | None:
    """After an incremental build: which parts of which marts it could have changed; None after a
    full build, on Spark (every Spark build is full), or when the plan or dbt's manifest of the
    build is missing (then every table is summarised whole).

    A refresh replaces the rows of the refreshed sessions and of the refreshed ISO weeks (by the
    model's date key, `dbt/macros/incremental_refresh.sql`). Every date of a refreshed session
    lies in the plan's dates (its events' UTC dates, a day either side), so in its weeks; another
    date column of a date-keyed model lies at most a day from the key, so in those weeks or the
    ones either side."""
    if settings.engine != "duckdb":
        return None
    [(found,)] = con.execute(
        "select count(*) from duckdb_tables() where database_name = 'warehouse' "
        "and schema_name = 'ops' and table_name in ('refresh_run', 'refresh_weeks')"
    ).fetchall()
    if found != 2:
        return None
    [(mode,)] = con.execute("select any_value(mode) from warehouse.ops.refresh_run").fetchall()
    models = built_models(settings) if mode == "incremental" else {}
    if not models:
        return None
    mondays = [
        monday
        for (monday,) in con.execute(
            "select distinct week_start from warehouse.ops.refresh_weeks"
        ).fetchall()
    ]
    keys = {}
    for name, node in models.items():
        config = node.get("config") or {}
        key = config.get("unique_key")
        if (
            node.get("schema") == PUBLISHED_SCHEMA
            and config.get("materialized") == "incremental"
            and isinstance(key, str)
        ):
            keys[name] = key
    weeks = {week_label(monday) for monday in mondays} | {"none"}
    around = weeks | {
        week_label(monday + timedelta(days=shift)) for monday in mondays for shift in (-7, 7)
    }
    return RefreshedWeeks(keys, frozenset(weeks), frozenset(around))
