-- One row per quarantined input row (SPEC 7): why, where, and a redacted sample. The raw text
-- stays in the raw layer; nothing here can carry a phone number or an e-mail address to a board.
with

quarantine as (
    select * from {{ source('raw', 'quarantine') }}
),

parsed as (
    select
        *,
        {{ try_parse_json('raw_text') }} as raw_json,
    from quarantine
),

final as (
    select
        reason,
        -- The ingest's detail is the field at fault for a contract rule, a sentence otherwise.
        case
            when {{ regexp_full_match('detail', "'[A-Za-z_][A-Za-z0-9_.]*'") }} then detail
        end as field,
        {{ redacted_sample('detail') }} as detail,
        source_file as file,
        line_number as line,
        {{ json_string_field('raw_json', "'$.event_type'") }} as event_type,
        source,
        -- The row's own time when readable, to date it (the weekly review counts by it).
        {{ try_to_utc_timestamp(json_string_field('raw_json', "'$.occurred_at'")) }} as occurred_at,
        quarantined_at,
        {{ redacted_sample('raw_text') }} as sample,
    from parsed
)

select * from final
