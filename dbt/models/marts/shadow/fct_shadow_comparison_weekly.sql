{{ shadow_comparison('week') }}
