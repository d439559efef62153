with

planning_settings as (
    select * from {{ source('reference', 'planning_settings') }}
),

final as (
    select
        hot_set_images,
        embedding_dimensions,
        bytes_per_value,
    from planning_settings
)

select * from final
