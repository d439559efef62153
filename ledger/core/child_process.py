"""Children that end with their parent (Linux): a supervisor or `ledger serve` killed by SIGKILL or
the OOM killer must not leave a server behind it holding its port.

    subprocess.Popen(command, preexec_fn=ends_with_this_process())

The kernel sends the child SIGTERM when the process that started it dies
(`prctl(PR_SET_PDEATHSIG)`). Elsewhere the child is left to the operator.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from contextlib import suppress

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _libc_prctl() -> Callable[..., int] | None:
    with suppress(OSError, AttributeError):
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    return None


# Looked up once, at import: the child between fork and exec must not import or load anything
# (another thread of the parent may hold a lock the fork copied).
_PRCTL = _libc_prctl()


def ends_with_this_process() -> Callable[[], None]:
    """A `preexec_fn` that has the child sent SIGTERM when this process dies, and ends the child
    at once if this process died before the request took effect."""
    parent = os.getpid()

    def preexec() -> None:  # pragma: no cover - runs in the child between fork and exec
        if _PRCTL is None:
            return
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # reparented already: no signal will come
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec
