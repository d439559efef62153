"""The `ledger` command, one module per command group (`app` holds the root and `COMMANDS`):

- `data`: `schema`, `simulate`, `ingest`, `recover`;
- `pipeline`: `build`;
- `planning`: `replay`, `whatif`;
- `exports`: `export session-ledger | focus | openslo`;
- `finops`: `rates import | check`, `reconcile import`;
- `alerting`: `alerts run`, `report weekly`;
- `slo`: `budgets alerts | review | forecast-accuracy`;
- `services`: `serve`, `collect serve`, `up`, `demo`;
- `home`: `backup`, `restore`.
"""

from ledger.commands.cli.app import main

__all__ = ["main"]
