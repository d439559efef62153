"""`make bench`: the benchmarks, kept out of the shipped `ledger` package (they simulate, build and
time; nothing in the product runs them).

- `bench`: `make bench`'s entry point: simulate the bench month, ingest, build, publish, render
  the boards, and the refresh figures (`python -m benchmarks.bench`).
- `freshness`: the collector's `202` to the published copy under steady load
  (`python -m benchmarks.freshness`).
- `refresh`: an incremental build against a full one on the same history
  (`python -m benchmarks.refresh`).
"""
