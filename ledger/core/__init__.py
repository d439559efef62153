"""The ground floor: what every other room imports and that imports nothing of the ledger's.

`settings` (the one `Settings` object and how it reaches every consumer), `calendar` (business dates
and ISO weeks in the reporting zone), `vocabulary` (components, meters, segments), `ratios` (exact
division), `numbers` (how figures are shown to people), `sql` (literals), `durable` (fsync and
atomic replace, the one way a file is written so that a crash leaves the old or the new one).
"""
