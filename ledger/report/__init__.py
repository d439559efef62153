"""The weekly margin review (SPEC 7): `weekly` reads the week's figures from the marts as exact
Decimals, `restatement` finds reported weeks that late events changed, `reconciliation` and
`capacity` add their sections, `tables` and `documents` render HTML, Markdown and XLSX, and
`review` is `ledger report weekly` and the weekly Dagster job (each run archived).

The modules not named above:

- `budgets`: the weekly review's SPEC 13 sections.
- `sections`: the weekly review's sections in the order every document shows them.
"""
