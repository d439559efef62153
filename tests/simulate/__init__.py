"""The traffic simulator."""
