"""Every query the boards run, on the published copy's marts: one module per page.

    from dashboards.queries import overview
    totals = overview.period_totals(version, filters)   # filters: the sidebar's frozen Filters

Rules that keep them safe and cheap (`dashboards.queries.common`):
- values travel as parameters (`?`), never pasted into SQL text; the only text composed into a
  statement comes from allow-lists (column choices, segment names), checked first;
- each cached function takes the frozen `Filters` whole plus the version of the published file
  (`version`), so a new publish is a new cache key and stale entries age out by TTL;
- the SQL names the `marts` schema only: the published copy holds nothing else;
- money comes back as exact Decimal; rounding for people happens in `dashboards.formatting`.
"""
