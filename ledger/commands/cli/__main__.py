"""`python -m ledger.commands.cli ...`: the `ledger` command (as the tests and services run it)."""

from ledger.commands.cli.app import main

main()
