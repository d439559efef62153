"""What readers open: the published copy (never the warehouse), the boards' access file, and the
session ledger export. Boards, alerts, the weekly review and the export all read through here.

The modules not named above:

- `access_file`: who may read the boards, and which tenants each reader sees:
  `$LEDGER_HOME/access.yaml`.
- `drivers`: what drove a cost change.
- `export`: `ledger export session-ledger`.
- `freshness`: freshness per source (SPEC 14): how far the published copy trails what each source
  sent.
- `links`: deep links into the boards: the address an alert, a review or another page hands a
  reader.
- `openslo`: `ledger export openslo` (SPEC 13).
- `published_copy`: the one way readers open the published copy (`settings.published_path`).
"""
