"""The ground floor: what every other room imports and that imports nothing of the ledger's.

`settings` (the one `Settings` object and how it reaches every consumer), `calendar` (business dates
and ISO weeks in the reporting zone), `vocabulary` (components, meters, segments), `ratios` (exact
division), `numbers` (how figures are shown to people), `sql` (literals), `durable` (fsync and
atomic replace, the one way a file is written so that a crash leaves the old or the new one).

The modules not named above:

- `child_process`: children that end with their parent (a killed supervisor or `ledger serve`
  leaves no server holding its port).
- `home_lock`: one run at a time per home (SPEC 12): ingest, build, recover and publish take
  `home/.ledger.lock`.
- `landing`: the landing folder's writer convention, shared by the writers (ledger/collect) and the
  ingest.
- `slo_rules`: the multi-window burn-rate rules of the latency SLOs (SPEC 13), as settings spell
  them.
- `terminal`: text that reaches a terminal: names from outside (file names) never carry control
  characters.
"""
