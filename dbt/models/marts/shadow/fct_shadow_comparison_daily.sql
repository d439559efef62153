{{ shadow_comparison('day') }}
