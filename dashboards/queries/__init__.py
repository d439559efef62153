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

The modules not named above:

- `anomalies`: the anomaly inbox: cost anomalies and rate-card drifts, as `ledger alerts run`
  recorded them.
- `budgets`: the spend budgets page (SPEC 13).
- `combined`: the combined page: margin and experience side by side, one row per tenant.
- `common`: what every page's queries share: the cache, the allow-lists, the sidebar filters as SQL.
- `data_quality`: the data quality page.
- `drivers`: what drove the cost change (Overview and Margin): the cells of
  ledger/serving/drivers.py.
- `experience`: the experience page: the latency budget, first-audio trend,
  interruption/cache/degradation rates.
- `margin`: the margin page: per tenant, per period, cost breakdowns and LLM phase routing.
- `operations`: the operations page: shadow-mode verdicts and pool capacity (SPEC 11).
- `overview`: the overview page: the period's totals, their daily (or hourly) trend.
- `sessions`: the session explorer: find a session.
- `slo`: the latency SLO page (SPEC 13).
"""
