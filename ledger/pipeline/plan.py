"""The refresh plan: what a build recomputes, decided in bulk SQL before dbt runs (issue 11).

    with connect(settings.warehouse_path) as con:
        plan = plan_refresh(con, settings, full_refresh=False)   # before dbt (Dagster asset)
    ... dbt build with dbt_build_args(settings, full_refresh=plan.is_full), publish ...
    with connect(settings.warehouse_path) as con:
        commit_refresh(con)                                       # only after build and publish

An incremental build recomputes the sessions in `ops.refresh_sessions`, each with its reason:
- `new_events`: the session has events in a raw file (`raw.event_files`) no successful build has
  read yet (`ops.refreshed_files`, which moves only in `commit_refresh`);
- `missing_end`: the `missing_end` watermark (SPEC 5) closes the session now, and did not at the
  last successful build;
- `rate_card`, `fx_rates`, `price_plans`: a row of that reference table differs from the snapshot
  taken at the last successful build, and the session has events on a UTC date of the changed
  effective range (these are recorded in `ops.restated_sessions` on commit);
- `provider_aliases`, `model_aliases`: an alias was added, removed or changed since that snapshot,
  and a usage line of the session carries the alias's seen name (as its provider or model, or as
  a part of a LiveKit Inference `provider/model`): aliases have no effective range, they rename
  (restated too).
and the ISO weeks (`ops.refresh_weeks`) of every date those sessions have events on, a day either
side (a business date is at most a day from the UTC date), plus the dates between a session's
first and last event: date-keyed aggregates are recomputed for those whole weeks. The events of
the refreshed sessions are copied to `ops.refresh_events`, read from the Parquet partitions of
their event dates only (`ops.session_event_dates` indexes which dates a session has events on).

The build is a full refresh when asked (`ledger build --full-refresh`), on a first build, when the
dbt project, the vars or a reference table without effective ranges (latency budgets) changed,
or when the last full refresh did not complete. On Spark (LEDGER_ENGINE=spark), whose Parquet
tables a refresh rewrites in place, after any build that did not complete; the previous state
(models missing, open sessions) is read from the tables Spark wrote.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import duckdb
import yaml

from ledger.contract.fields import raw_event_columns
from ledger.core.settings import DBT_PROJECT_DIR, Settings
from ledger.core.sql import literal
from ledger.warehouse import raw_root

# Reference tables whose edits restate only the sessions of the changed effective range.
DATED_REFERENCE = ("rate_card", "fx_rates", "price_plans")
# Reference tables whose edits restate the sessions whose usage carries a changed seen name.
NAMING_REFERENCE = ("provider_aliases", "model_aliases")
RESTATING_REFERENCE = (*DATED_REFERENCE, *NAMING_REFERENCE)
# Reference tables whose edits rebuild everything (no effective range to follow).
REBUILDING_REFERENCE = ("latency_budgets",)
# Models the planner reads the previous state from; without them the build is a full refresh.
REQUIRED_MODELS = (
    "intermediate.int_sessions_resolved",
    "intermediate.int_usage_lines_priced",
    "marts.fct_session_ledger",
)

_OPS_TABLES = {
    "refresh_state": "key varchar primary key, value varchar",
    "refreshed_files": "path varchar",
    "indexed_event_files": "path varchar",
    "session_event_dates": "session_id varchar, event_date date",
    "restated_sessions": "session_id varchar, reason varchar, restated_at timestamp",
}


@dataclass
class RefreshPlan:
    mode: str  # 'full' or 'incremental'
    why: str
    files: list[str] = field(default_factory=list)
    sessions_by_reason: dict[str, int] = field(default_factory=dict)
    sessions: int = 0
    dates: list[date] = field(default_factory=list)
    weeks: list[date] = field(default_factory=list)
    newest_event_at: datetime | None = None

    @property
    def is_full(self) -> bool:
        return self.mode == "full"

    def summary_line(self) -> str:
        if self.is_full:
            return f"refresh: full ({self.why}), {len(self.files)} raw files"
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.sessions_by_reason.items()))
        first_last = f" ({self.dates[0]} .. {self.dates[-1]})" if self.dates else ""
        return (
            f"refresh: incremental, {len(self.files)} new raw files, {self.sessions} sessions"
            f"{' (' + reasons + ')' if reasons else ''}, {len(self.dates)} dates in "
            f"{len(self.weeks)} ISO weeks{first_last}"
        )


def missing_end_after_hours() -> int:
    """The dbt var of the `missing_end` watermark (dbt_project.yml), read where dbt reads it."""
    project = yaml.safe_load((DBT_PROJECT_DIR / "dbt_project.yml").read_text())
    return int(project["vars"]["missing_end_after_hours"])


def ensure_ops_tables(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("create schema if not exists ops")
    for table, columns in _OPS_TABLES.items():
        con.execute(f"create table if not exists ops.{table} ({columns})")


def _relation_exists(con: duckdb.DuckDBPyConnection, qualified: str) -> bool:
    schema, name = qualified.split(".")
    return bool(
        con.execute(
            "select count(*) from information_schema.tables where table_catalog = "
            "current_database() and table_schema = ? and table_name = ?",
            [schema, name],
        ).fetchone()[0]
    )


def _rows_digest(con: duckdb.DuckDBPyConnection, qualified: str) -> str:
    if not _relation_exists(con, qualified):
        return "absent"
    rows = con.execute(f"select * from {qualified} order by all").fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def project_fingerprint(con: duckdb.DuckDBPyConnection, settings: Settings) -> str:
    """What makes earlier results unusable: the dbt project's files, the vars, and the reference
    tables without effective ranges."""
    from ledger.pipeline.transform import PLACE_VARS, dbt_vars

    digest = hashlib.sha256()
    for folder in ("models", "macros", "data-tests"):
        for path in sorted((DBT_PROJECT_DIR / folder).rglob("*")):
            if path.is_file():
                digest.update(str(path.relative_to(DBT_PROJECT_DIR)).encode())
                digest.update(path.read_bytes())
    digest.update((DBT_PROJECT_DIR / "dbt_project.yml").read_bytes())
    frame = {k: v for k, v in dbt_vars(settings).items() if k not in PLACE_VARS}
    digest.update(json.dumps(frame, sort_keys=True).encode())
    for table in REBUILDING_REFERENCE:
        digest.update(_rows_digest(con, f"reference.{table}").encode())
    return digest.hexdigest()


def _model_relation(
    con: duckdb.DuckDBPyConnection, settings: Settings, qualified: str
) -> str | None:
    """The model `qualified` as the last build left it: the warehouse's table on DuckDB, the
    Parquet files Spark wrote on Spark; None when there is none."""
    if settings.engine == "spark":
        from ledger.pipeline.spark import model_parquet

        files = model_parquet(settings, qualified)
        return f"read_parquet({literal(files)})" if files else None
    return qualified if _relation_exists(con, qualified) else None


def _state(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("select key, value from ops.refresh_state").fetchall())


def _set_state(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute("insert or replace into ops.refresh_state values (?, ?)", [key, value])


def _literal_list(paths: list[str]) -> str:
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def _events_select(con: duckdb.DuckDBPyConnection, paths: list[str], where: str) -> str:
    """raw.events' columns, read from `paths` (relative to the raw root) only."""
    columns = raw_event_columns()
    if not paths:
        nulls = ", ".join(f"cast(null as {kind}) as {name}" for name, kind in columns)
        return f"select {nulls} where false"
    root = raw_root(con)
    listed = _literal_list([str(root / p) for p in paths])
    cast = ", ".join(f"cast({name} as {kind}) as {name}" for name, kind in columns)
    return (
        f"select {cast} from read_parquet({listed}, hive_partitioning = false, "
        f"union_by_name = true) where {where}"
    )


def _index_new_files(con: duckdb.DuckDBPyConnection) -> None:
    """Add the (session, event date) pairs of raw files not indexed yet."""
    paths = [
        p
        for (p,) in con.execute(
            "select path from raw.event_files where path not in "
            "(select path from ops.indexed_event_files) order by path"
        ).fetchall()
    ]
    if not paths:
        return
    root = raw_root(con)
    listed = _literal_list([str(root / p) for p in paths])
    con.execute(
        "insert into ops.session_event_dates select distinct session_id, "
        f"cast(occurred_at as date) from read_parquet({listed}, hive_partitioning = false) "
        "where session_id is not null and occurred_at is not null"
    )
    con.executemany("insert into ops.indexed_event_files values (?)", [[p] for p in paths])


def _reference_changes(con: duckdb.DuckDBPyConnection) -> None:
    """ops._reference_ranges (reason, from_date, to_date): the UTC date ranges in which an edit
    of a restating reference table changes prices (to_date NULL: open-ended)."""
    con.execute(
        "create or replace temp table _reference_ranges "
        "(reason varchar, from_date date, to_date date)"
    )
    for table in DATED_REFERENCE:
        snapshot = f"ops.reference_{table}"
        if not _relation_exists(con, snapshot) or not _relation_exists(con, f"reference.{table}"):
            continue
        changed = (
            f"(select * from (select * from reference.{table} except all select * from {snapshot})"
            f" union all (select * from {snapshot} except all select * from reference.{table}))"
        )
        if table == "fx_rates":
            # A rate applies from its date until the next rate of its currency (before or after
            # the edit, whichever is later).
            con.execute(
                f"""
                insert into _reference_ranges
                with changed as {changed},
                next_dates as (
                    select
                        changed.rate_date,
                        (select min(rate_date) from reference.fx_rates as cur
                         where cur.currency = changed.currency
                           and cur.rate_date > changed.rate_date) as next_current,
                        (select min(rate_date) from {snapshot} as old
                         where old.currency = changed.currency
                           and old.rate_date > changed.rate_date) as next_snapshot,
                    from changed
                )
                select 'fx_rates', rate_date,
                    case when next_current is null or next_snapshot is null then null
                        else greatest(next_current, next_snapshot) end
                from next_dates
                """
            )
        else:
            con.execute(
                f"insert into _reference_ranges select '{table}', "
                "cast(effective_from as date), cast(effective_to as date) "
                f"from {changed}"
            )


def _alias_changes(con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
    """Add to ops.refresh_sessions the sessions whose usage lines (as the last build priced them)
    carry a seen name of an alias added, removed or changed since the last successful build."""
    lines = _model_relation(con, settings, "intermediate.int_usage_lines_priced")
    columns = {"provider_aliases": "seen, provider", "model_aliases": "provider, seen, model"}
    for table in NAMING_REFERENCE:
        snapshot = f"ops.reference_{table}"
        if lines is None or not _relation_exists(con, snapshot):
            continue
        if not _relation_exists(con, f"reference.{table}"):
            continue
        # Line numbers are left out: moving a row is no change.
        current = f"select {columns[table]} from reference.{table}"
        before = f"select {columns[table]} from {snapshot}"
        con.execute(
            f"""
            insert into ops.refresh_sessions
            with changed as (
                select distinct lower(seen) as seen_key from (
                    (select * from ({current}) except all select * from ({before}))
                    union all
                    (select * from ({before}) except all select * from ({current}))
                )
            ),
            names as (
                select distinct session_id, lower(seen_provider) as name_key from {lines}
                union
                select distinct session_id, lower(seen_model) from {lines}
                union
                select distinct session_id, lower(split_part(seen_model, '/', 1)) from {lines}
                where strpos(seen_model, '/') > 0
                union
                select distinct session_id,
                    lower(split_part(substring(seen_model, strpos(seen_model, '/') + 1), ':', 1))
                from {lines}
                where strpos(seen_model, '/') > 0
            )
            select distinct names.session_id, '{table}'
            from names
            inner join changed on names.name_key = changed.seen_key
            """
        )


def plan_refresh(
    con: duckdb.DuckDBPyConnection, settings: Settings, *, full_refresh: bool = False
) -> RefreshPlan:
    """Decide what this build recomputes and write the plan's ops tables (one transaction)."""
    ensure_ops_tables(con)
    con.execute("begin transaction")
    try:
        plan = _plan(con, settings, full_refresh)
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return plan


def _plan(con: duckdb.DuckDBPyConnection, settings: Settings, full_refresh: bool) -> RefreshPlan:
    _index_new_files(con)
    state = _state(con)
    fingerprint = project_fingerprint(con, settings)
    newest = con.execute("select max(max_occurred_at) from raw.event_files").fetchone()[0]
    why = _why_full(con, settings, state, fingerprint, full_refresh)
    _reset_plan_tables(con, "full" if why else "incremental", newest)
    _set_state(con, "planned_fingerprint", fingerprint)
    if why:
        con.execute("create table ops.refresh_plan_files as select path from raw.event_files")
        con.execute(f"create or replace table ops.refresh_events as {_events_select(con, [], '')}")
        _set_state(con, "pending_full", "yes")
        files = [p for (p,) in con.execute("select path from ops.refresh_plan_files").fetchall()]
        return RefreshPlan("full", why, files=sorted(files), newest_event_at=newest)

    if settings.engine == "spark":
        # A Spark refresh rewrites its tables in place: until it commits, the next build is full.
        _set_state(con, "pending_full", "spark")
    files = _plan_sessions(con, settings, newest)
    _plan_dates(con, state)
    _plan_events(con)
    return _incremental_plan(con, files, newest)


def _why_full(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    state: dict[str, str],
    fingerprint: str,
    full_refresh: bool,
) -> str | None:
    """Why this build must recompute everything (None: it can refresh incrementally)."""
    if full_refresh:
        return "asked for"
    if "fingerprint" not in state:
        return "first build"
    if state.get("pending_full") == "yes":
        return "the last full refresh did not complete"
    if state.get("pending_full") == "spark":
        return "the last Spark build did not complete"
    if state["fingerprint"] != fingerprint:
        return "the dbt project, its vars or the latency budgets changed"
    if not all(_model_relation(con, settings, m) for m in REQUIRED_MODELS):
        return "models missing"
    return None


def _reset_plan_tables(con: duckdb.DuckDBPyConnection, mode: str, newest: datetime | None) -> None:
    """Empty plan tables, and the run row (mode, newest event, when planned)."""
    for table in ("refresh_sessions", "refresh_weeks", "refresh_dates", "refresh_plan_files"):
        con.execute(f"drop table if exists ops.{table}")
    con.execute("create table ops.refresh_sessions (session_id varchar, reason varchar)")
    con.execute("create table ops.refresh_dates (refresh_date date)")
    con.execute("create table ops.refresh_weeks (week_start date)")
    con.execute(
        "create or replace table ops.refresh_run as select ? as mode, "
        "cast(? as timestamp) as newest_event_at, cast(? as timestamp) as planned_at",
        [mode, newest, datetime.now(UTC).replace(tzinfo=None)],
    )


def _plan_sessions(
    con: duckdb.DuckDBPyConnection, settings: Settings, newest: datetime | None
) -> list[str]:
    """The sessions to recompute, each with its reason (new events, a missing end, a changed
    reference range) into `ops.refresh_sessions`; returns the raw files not yet refreshed."""
    con.execute(
        "create table ops.refresh_plan_files as select path from raw.event_files "
        "where path not in (select path from ops.refreshed_files)"
    )
    files = sorted(p for (p,) in con.execute("select path from ops.refresh_plan_files").fetchall())
    if files:
        root = raw_root(con)
        con.execute(
            "insert into ops.refresh_sessions select distinct session_id, 'new_events' from "
            f"read_parquet({_literal_list([str(root / p) for p in files])}, "
            "hive_partitioning = false) where session_id is not null"
        )
    if newest is not None:
        con.execute(
            "insert into ops.refresh_sessions select session_id, 'missing_end' "
            f"from {_model_relation(con, settings, 'intermediate.int_sessions_resolved')} "
            "where is_open and last_event_at < cast(? as timestamp) - to_hours(?)",
            [newest, missing_end_after_hours()],
        )
    _reference_changes(con)
    con.execute(
        """
        insert into ops.refresh_sessions
        select distinct dates.session_id, ranges.reason
        from ops.session_event_dates as dates
        inner join _reference_ranges as ranges
            on dates.event_date >= ranges.from_date
            and (ranges.to_date is null or dates.event_date <= ranges.to_date)
        """
    )
    _alias_changes(con, settings)
    return files


def _plan_dates(con: duckdb.DuckDBPyConnection, state: dict[str, str]) -> None:
    """The dates and ISO weeks to recompute: the refreshed sessions' and the imported bills'."""
    # Dates: every date from a refreshed session's first event to its last, a day either side.
    con.execute(
        """
        insert into ops.refresh_dates
        with spans as (
            select session_id, min(event_date) as first_date, max(event_date) as last_date
            from ops.session_event_dates
            where session_id in (select session_id from ops.refresh_sessions)
            group by session_id
        )
        select distinct cast(unnest(generate_series(first_date - 1, last_date + 1, interval 1 day))
            as date)
        from spans
        """
    )
    imports_digest = _rows_digest(con, "imports.provider_costs")
    if imports_digest != state.get("imports_digest") and imports_digest != "absent":
        # The days of the bills (a date the sessions already put in the plan is listed once).
        con.execute(
            "insert into ops.refresh_dates select usage_date from imports.provider_costs "
            "where usage_date is not null except select refresh_date from ops.refresh_dates"
        )
    con.execute(
        "insert into ops.refresh_weeks select distinct cast(date_trunc('week', refresh_date) "
        "as date) from ops.refresh_dates"
    )


def _plan_events(con: duckdb.DuckDBPyConnection) -> None:
    """`ops.refresh_events`: the events of the refreshed sessions, read from only the raw files of
    their dates."""
    event_dates = [
        p
        for (p,) in con.execute(
            """
            select path from raw.event_files
            where event_date in (
                select event_date from ops.session_event_dates
                where session_id in (select session_id from ops.refresh_sessions)
            )
            order by path
            """
        ).fetchall()
    ]
    con.execute(
        "create or replace table ops.refresh_events as "
        + _events_select(
            con, event_dates, "session_id in (select session_id from ops.refresh_sessions)"
        )
    )


def _incremental_plan(
    con: duckdb.DuckDBPyConnection, files: list[str], newest: datetime | None
) -> RefreshPlan:
    """The incremental plan as the build reports it, read back from the plan tables."""
    by_reason = dict(
        con.execute(
            "select reason, count(distinct session_id) from ops.refresh_sessions group by reason"
        ).fetchall()
    )
    sessions = con.execute(
        "select count(distinct session_id) from ops.refresh_sessions"
    ).fetchone()[0]
    dates = [
        d
        for (d,) in con.execute("select refresh_date from ops.refresh_dates order by 1").fetchall()
    ]
    weeks = [
        w for (w,) in con.execute("select week_start from ops.refresh_weeks order by 1").fetchall()
    ]
    return RefreshPlan(
        "incremental",
        "new data since the last build",
        files=files,
        sessions_by_reason=by_reason,
        sessions=sessions,
        dates=dates,
        weeks=weeks,
        newest_event_at=newest,
    )


def refresh_mode(con: duckdb.DuckDBPyConnection) -> str:
    """The mode of the plan written last ('full' when there is none)."""
    if not _relation_exists(con, "ops.refresh_run"):
        return "full"
    row = con.execute("select mode from ops.refresh_run").fetchone()
    return row[0] if row else "full"


def commit_refresh(con: duckdb.DuckDBPyConnection) -> int:
    """After a successful build and publish: the plan's files count as refreshed, restatements
    are recorded, the reference tables are snapshotted. Returns the restated sessions."""
    ensure_ops_tables(con)
    con.execute("begin transaction")
    try:
        state = _state(con)
        now = datetime.now(UTC).replace(tzinfo=None)
        con.execute(
            "insert into ops.refreshed_files select path from ops.refresh_plan_files "
            "where path not in (select path from ops.refreshed_files)"
        )
        restated = con.execute(
            "insert into ops.restated_sessions select distinct session_id, reason, ? "
            "from ops.refresh_sessions where reason in ("
            + ", ".join(f"'{t}'" for t in RESTATING_REFERENCE)
            + ")",
            [now],
        ).fetchone()[0]
        for table in RESTATING_REFERENCE:
            if _relation_exists(con, f"reference.{table}"):
                con.execute(
                    f"create or replace table ops.reference_{table} as "
                    f"select * from reference.{table}"
                )
        _set_state(con, "fingerprint", state["planned_fingerprint"])
        _set_state(con, "imports_digest", _rows_digest(con, "imports.provider_costs"))
        _set_state(con, "pending_full", "no")
        _set_state(con, "committed_at", now.isoformat())
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return restated
