-- SPEC 5: an unpriced line's cost is NULL, never 0, and says why; a priced line has an amount.
with

usage_lines as (
    select * from {{ ref('int_usage_lines_priced') }} {{ refresh_filter('session_id') }}
),

final as (
    select *
    from usage_lines
    where (is_priced and (amount is null or unpriced_reason is not null))
        or (not is_priced and (amount is not null or unpriced_reason is null))
)

select * from final
