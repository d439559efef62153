"""Freshness per source (SPEC 14): how far the published copy trails what each source sent.

A batch the HTTP collector accepts is stored, before its `202`, as
`landing/collector/<source>/<date>/<UTC time of acceptance>-<id>.jsonl`
(ledger/collect/server.py): its name is the time of the `202` to the microsecond. The published
copy lists every ingested file (`marts.fct_ingested_files`) and when it was published
(`publication.published_at`), so per source:

- `newest_accepted_at`: the newest batch of that source the published copy holds;
- `data_lag_seconds`: `published_at - newest_accepted_at`, the age of that source's newest
  visible batch when the copy was published. Under steady traffic it is the time a batch takes
  from the `202` to the boards; for a source that stopped sending it grows with the silence.

A file dropped into the landing folder by other means has no acceptance time; for those the
ingest's own time (`ingested_at`) stands in, under the source `(landing folder)`, and the figure
then leaves out the time the file waited in the folder.
"""

from __future__ import annotations

import duckdb

LANDING_SOURCE = "(landing folder)"

# The collector's file name: <source>/<yyyy-mm-dd>/<yyyymmddTHHMMSSffffff>Z-<id>.jsonl
_COLLECTED = r"/landing/collector/([^/]+)/[0-9-]+/([0-9]{8}T[0-9]{12})Z-[^/]*$"

DATA_LAG_BY_SOURCE_SQL = f"""
    with files as (
        select
            coalesce(nullif(regexp_extract(path, '{_COLLECTED}', 1), ''), '{LANDING_SOURCE}')
                as source,
            coalesce(
                try_strptime(regexp_extract(path, '{_COLLECTED}', 2), '%Y%m%dT%H%M%S%f'),
                ingested_at
            ) as accepted_at,
            accepted
        from marts.fct_ingested_files
    )
    select
        files.source,
        max(files.accepted_at) as newest_accepted_at,
        count(*) as files,
        sum(files.accepted) as events,
        any_value(publication.published_at) as published_at,
        round(
            epoch(any_value(publication.published_at)) - epoch(max(files.accepted_at)), 3
        ) as data_lag_seconds
    from files, publication
    group by files.source
    order by files.source
"""


def data_lag_by_source(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """(source, newest_accepted_at, files, events, published_at, data_lag_seconds) per source, on
    a connection to the published copy."""
    return con.execute(DATA_LAG_BY_SOURCE_SQL).fetchall()
