-- One row per landing file the ingest has read: rows, accepted, duplicates, quarantined.
with

ingested_files as (
    select * from {{ source('raw', 'ingested_files') }}
),

final as (
    select
        path,
        rows,
        accepted,
        duplicates,
        quarantined,
        ingested_at,
    from ingested_files
)

select * from final
