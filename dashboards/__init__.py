"""The Streamlit boards on the published copy of the marts: `streamlit run dashboards/app.py`.

The modules not named above:

- `app`: entry file of the boards: owns navigation, the shared sidebar and the empty-warehouse
  guide.
- `charts`: light Plotly figures: the specification `plotly.express` would produce, without its
  cost.
- `comparison`: change against the previous period, said the same way on every page.
- `connection`: the boards' one connection: read-only, to the published copy of the marts.
- `drivers_view`: what drove the cost change, on Overview and Margin.
- `filters`: the sidebar every page shares: period, tenant, scenario, pipeline, and the publication.
- `formatting`: how numbers are shown to people: money rounded half-even to 2 places with its
  currency.
- `kpi_cells`: the headline cells Overview and Margin share.
- `kpis`: the headline figures of a period, derived exactly (Decimal) from summed ledger amounts.
- `presentation`: query results turned into what a page shows: rounded, labelled tables and shared
  widgets.
- `reconciliation`: the reconciliation section of the data-quality page (SPEC 10).
- `sign_in`: who is reading: the sign-in gate of the boards.
- `timeline`: time-series charts said one way.
- `queries`: every query the boards run, on the published copy's marts: one module per page.
"""
