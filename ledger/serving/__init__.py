"""What readers open: the published copy (never the warehouse), the boards' access file, and the
session ledger export. Boards, alerts, the weekly review and the export all read through here.
"""
