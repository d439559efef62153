"""A key repeated in one JSON object is `duplicate_key` (issue 26, SPEC 3), decided by one SQL rule.

Readers disagree on such an object: DuckDB (the ingest) keeps the first value, Python's `json` the
last. Through the collector a token of `gw-a` wrote an event as `gw-b` that way: the collector
checked the last `"source"`, the ingest stored the first. So nothing reads a repeated key: the bulk
ingest (`ledger.ingest.validation`), the collector's door (`ledger.collect.server`) and the
pydantic reference (`ledger.contract.verdict`) all apply `repeated_key_sql` in DuckDB, whose
`json_keys` lists an object's top-level keys as sent, repeats included and escapes decoded
(`"sour\\u0063e"` is `source`). The contract's events are flat: the top level is what matters.
"""

from __future__ import annotations

import threading

import duckdb

# One in-memory connection per thread: opening one per call cost about 30 ms, per line checked.
_local = threading.local()


def _connection() -> duckdb.DuckDBPyConnection:
    con = getattr(_local, "con", None)
    if con is None:
        con = _local.con = duckdb.connect()
    return con


def repeated_key_sql(keys: str) -> str:
    """SQL: the first key of the list `keys` (an object's `json_keys`) met a second time, else NULL."""
    return f"list_filter({keys}, lambda k, i: list_position({keys}, k) < i)[1]"


def first_repeated_keys(objects: list[str]) -> list[str | None]:
    """For each JSON text (an object; anything else has no keys), its first repeated key or None."""
    if not objects:
        return []
    keys = "case when json_valid(t) and json_type(t) = 'OBJECT' then json_keys(t) end"
    rows = (
        _connection()
        .execute(
            f"select {repeated_key_sql(keys)} from unnest($texts) with ordinality as u(t, n) "
            "order by n",
            {"texts": objects},
        )
        .fetchall()
    )
    return [row[0] for row in rows]


def array_items(array: str) -> list[str]:
    """The items of a JSON array as DuckDB writes them, repeated keys kept (for the rule above)."""
    [(items,)] = (
        _connection()
        .execute("select case when json_valid($a) then json_extract($a, '$[*]') end", {"a": array})
        .fetchall()
    )
    return [str(item) for item in items or []]
