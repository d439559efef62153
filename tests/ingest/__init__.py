"""The event contract and the ingest: validation, quarantine, deduplication, atomic commits."""
