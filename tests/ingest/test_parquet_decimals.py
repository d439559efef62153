"""A Parquet FLOAT or DOUBLE column for a decimal field is `bad_type` (issue 26 point 2, SPEC 3):
a binary float is no exact quantity, and was read through its shortest text."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb

from ledger.core.settings import Settings
from ledger.ingest import ingest_paths
from tests.support.events import INGEST_TIME, query


def test_a_parquet_float_column_for_a_decimal_field_is_bad_type(tmp_path: Path) -> None:
    # Issue 26: a DOUBLE column was read through its shortest text, not refused. A DECIMAL column
    # (exact) and a decimal sent as text go in; FLOAT and DOUBLE are bad_type, a null is absent.
    settings = Settings.from_env({"LEDGER_HOME": str(tmp_path / "home")})
    base = (
        "select 'asr.usage' as event_type, 'gw-1' as source, 'acme-telecom' as tenant_id, "
        "'s-1' as session_id, timestamptz '2026-11-01 10:00:00+00' as occurred_at, "
        "'aliyun' as provider, 'paraformer' as model"
    )
    files = {
        "decimal": "cast(4.25 as decimal(18,6))",
        "double": "cast(4.25 as double)",
        "float": "cast(4.25 as float)",
        "text": "'4.25'",
    }
    paths = []
    with duckdb.connect() as con:
        for name, value in files.items():
            path = tmp_path / "in" / f"{name}.parquet"
            path.parent.mkdir(exist_ok=True)
            con.execute(
                f"copy ({base}, 'e-{name}' as event_id, {value} as audio_seconds) "
                f"to '{path}' (format parquet)"
            )
            paths.append(path)

    ingest_paths(settings, paths, ingest_time=INGEST_TIME)

    assert query(settings, "select event_id, audio_seconds from raw.events order by 1") == [
        ("e-decimal", Decimal("4.250000")),
        ("e-text", Decimal("4.250000")),
    ]
    assert query(
        settings, "select event_id, reason, detail from raw.quarantine order by event_id"
    ) == [("e-double", "bad_type", "audio_seconds"), ("e-float", "bad_type", "audio_seconds")]
