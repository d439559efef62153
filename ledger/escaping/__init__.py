"""Text from outside written as data, never as markup (issue 41).

Every string that comes from events, reference data or a URL (a tenant, provider or model name, a
session id, a query parameter) is escaped for the medium it is written to, by that medium's module,
at the place it is written: `streamlit_markdown` (the boards' captions, headers and messages),
`markdown` (the weekly review's Markdown), `html` (the review's HTML), `slack` (alert messages,
their `text` and mrkdwn blocks) and `spreadsheet` (CSV exports opened in a spreadsheet). `text`
holds what every medium shares: control and direction characters spelt out, and a length limit
for what people read on a screen. The package imports nothing of the ledger's, so every package
above it (boards, alerts, the review, exports) calls the same rule.
"""
