"""Parquet rows judged on their typed columns (issue 30) give exactly the rows the text validation
gives for the JSON text they stand for: the same verdicts, typed values and payload hashes."""

from __future__ import annotations

from pathlib import Path

import duckdb

from ledger.ingest.files import _parquet_lines, parquet_rows, parquet_text_sql
from ledger.ingest.validation import TypedRows, proven_sql, validation_sql
from ledger.simulate import simulate
from tests.support.events import INGEST_TIME

NO_TEXT = (
    "(select 0 as file_index, 0::bigint as line_number, null::varchar as raw_text where false)"
)

# Columns of other DuckDB types than the simulator writes: exact decimals, instants, small
# integers, a float column (refused for a decimal field), an unknown column, personal data, a
# future instant, an unknown event type, a negative count, a null where a value is required.
_ROW = (
    "select {event_id} as event_id, 'gw-1' as source, {event_type} as event_type, "
    "{occurred_at} as occurred_at, 'acme-telecom' as tenant_id, {session_id} as session_id, "
    "'aliyun' as provider, {model} as model, {audio} as audio_seconds, {tokens} as input_tokens, "
    "{cached} as cached_input_tokens, {output} as output_tokens, {turn} as turn_index, "
    "{note} as note, {ratio} as ratio"
)
_VALUES = {
    "event_id": "'e-1'",
    "event_type": "'asr.usage'",
    "occurred_at": "timestamptz '2026-11-01 10:00:00.25+08'",
    "session_id": "'s-1'",
    "model": "'paraformer'",
    "audio": "cast(4.25 as decimal(18, 6))",
    "tokens": "null::integer",
    "cached": "null::smallint",
    "output": "null::ubigint",
    "turn": "null::integer",
    "note": "null::varchar",
    "ratio": "null::double",
}
_CHANGES = [
    {},
    {"event_id": "'e-2'", "session_id": "'mail a@b.co'"},
    {"event_id": "'e-3'", "occurred_at": "timestamptz '2027-01-01 00:00:00+00'"},
    {"event_id": "'e-4'", "note": "'kept?'"},
    {"event_id": "'e-5'", "event_type": "'asr.used'"},
    {"event_id": "'e-6'", "audio": "null::decimal(18, 6)"},
    {"event_id": "'e-7'", "ratio": "0.5"},
    {"event_id": "'e-8'", "audio": "cast(0 as decimal(18, 6))"},
    *(
        {
            "event_id": f"'l-{i}'",
            "event_type": "'llm.usage'",
            "model": "'deepseek-chat'",
            "audio": "null::decimal(18, 6)",
            "tokens": tokens,
            "cached": "0",
            "output": "cast(7 as ubigint)",
            "turn": "2",
        }
        for i, tokens in enumerate(["120", "-1", "null::integer"])
    ),
    {
        "event_id": "'l-3'",
        "event_type": "'llm.usage'",
        "tokens": "1",
        "cached": "0",
        "output": "cast(7 as ubigint)",
        "turn": "2",
    },
]


def _hand_made(path: Path) -> Path:
    rows = " union all ".join(_ROW.format(**{**_VALUES, **change}) for change in _CHANGES)
    with duckdb.connect() as con:
        con.execute(f"copy ({rows}) to '{path}' (format parquet)")
    return path


def test_parquet_rows_judged_on_their_columns_give_the_text_validations_rows(
    tmp_path: Path,
) -> None:
    simulate(
        tmp_path / "sim",
        tenants=2,
        days=2,
        sessions_per_day=4,
        fmt="parquet",
        shadow=True,
        bad_row_share=0.05,
        seed=3,
    )
    paths = [*sorted((tmp_path / "sim").rglob("*.parquet")), _hand_made(tmp_path / "hand.parquet")]
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    # The simulator's files share a schema, read together; the hand-made file has its own.
    groups = parquet_rows(con, dict(enumerate(paths)))
    assert len(groups) == 2
    typed = [TypedRows(rows, columns, parquet_text_sql(columns)) for rows, columns in groups]
    as_text = (
        "("
        + " union all ".join(
            f"select {index} as file_index, line_number, raw_text from {_parquet_lines(con, path)}"
            for index, path in enumerate(paths)
        )
        + ")"
    )
    params = {"ingest_time": INGEST_TIME.isoformat()}

    def rows(sql: str) -> list[tuple]:
        return con.execute(f"{sql} order by file_index, line_number", params).fetchall()

    by_columns = rows(f"select * from ({validation_sql(NO_TEXT, typed=tuple(typed))})")
    by_text = rows(f"select * from ({validation_sql(as_text)})")
    by_ladder = rows(f"select * from ({validation_sql(as_text, fast=False)})")

    assert by_columns == by_text == by_ladder
    hand = [(row[1], row[2], row[3]) for row in by_columns if row[0] == len(paths) - 1]
    assert hand == [
        (1, None, None),
        (2, "personal_data", "session_id"),
        (3, "future_timestamp", "occurred_at"),
        (4, "unknown_field", "note"),
        (5, "bad_value", "event_type"),
        (6, "missing_field", "audio_seconds"),
        (7, "unknown_field", "ratio"),
        (8, None, None),
        (9, None, None),
        (10, "bad_value", "input_tokens"),
        (11, "missing_field", "input_tokens"),
        (12, "unknown_field", "audio_seconds"),
    ]
    # Every valid row was judged on its columns: none was rendered to text for the ladder.
    [(proven,)] = con.execute(
        f"select count(*) from ({proven_sql(NO_TEXT, tuple(typed))})", params
    ).fetchall()
    valid = sum(1 for row in by_columns if row[2] is None)
    assert proven == valid > 1000
