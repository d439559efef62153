{#- On Spark the staged events are written once per build, as Parquet partitioned by event type:
    each per-type staging view reads only its own folder, where a view here would have every model
    read the raw files again for each event type it uses (about 30 reads of raw.events per build).
    Spark puts the partition column last; every reader of this model names its columns. The static
    overwrite replaces the whole folder even when a refresh has set dynamic partition overwrite on
    the session (engine/spark_incremental.sql): a refresh's staged events are its events alone.
    On DuckDB it stays a view, as the rest of staging. -#}
{{ config(
    materialized='table' if target.type == 'spark' else 'view',
    partition_by=['event_type'] if target.type == 'spark' else none,
    options={'partitionOverwriteMode': 'static'} if target.type == 'spark' else none,
) }}
with

events as (
    select * from {{ refresh_events_relation(
        source('raw', 'events'), source('ops', 'refresh_events')
    ) }}
),

final as (
    select * from events
)

select * from final
