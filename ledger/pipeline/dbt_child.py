"""`ledger-dbt`: dbt, as a child that dies with the build that started it.

Dagster's `DbtCliResource` runs dbt as a subprocess. Killed, a build left that dbt running on, and
holding the warehouse's write lock, until it finished on its own (about 30 s on the demo month):
the next `ledger build` or `ledger ingest` could not open the warehouse meanwhile. This entry point
(the resource's `dbt_executable`, dagster_project/defs/ledger_dbt.py) first asks Linux to send it
SIGTERM when its parent dies (`prctl(PR_SET_PDEATHSIG)`), then runs dbt's own command line in the
same process. The operating system releases the lock as the process ends.

A build killed while this process was still starting (before the request took effect) is caught
too: the build names itself in `LEDGER_DBT_PARENT_PID` (`spawning_dbt()`), and a `ledger-dbt` whose
parent is not that process any more ends at once instead of running dbt as an orphan.

Elsewhere than Linux it is plain dbt.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_PID_VARIABLE = "LEDGER_DBT_PARENT_PID"


def spawning_dbt() -> None:
    """Name this process as the parent of the `ledger-dbt` it is about to start (call it in the
    process that starts dbt, right before): dbt inherits the environment."""
    os.environ[PARENT_PID_VARIABLE] = str(os.getpid())


def die_with_parent(sig: int = signal.SIGTERM) -> bool:
    """Have the kernel send `sig` to this process when its parent ends; whether it could."""
    if not sys.platform.startswith("linux"):
        return False
    # A signal ignored or blocked by whatever started this process stays so across exec (a test
    # worker, a supervisor): then neither the kernel's signal nor our own below would end it.
    signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    named = os.environ.get(PARENT_PID_VARIABLE, "")
    parent = int(named) if named.isdigit() else os.getppid()
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        return False
    # The parent may have died before the request took effect (this process was reparented):
    # then no signal will come.
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)
    return True


def main() -> None:
    die_with_parent()
    from dbt.cli.main import cli

    sys.argv[0] = "dbt"
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
