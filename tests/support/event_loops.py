"""Running a voice framework's coroutine to the end in a test, with a bounded shutdown.

`asyncio.run` cancels the tasks a coroutine leaves behind and then waits for them, and for the
default executor's threads, without any limit. Pipecat and LiveKit start tasks of their own (frame
pumps, websocket readers, metrics timers); one that swallows its cancellation, or a thread blocked
in a socket read, held a whole `make test` for 93 minutes (issue 37, point 8). `run_bounded` gives
every leftover task a grace period after its cancellation and then fails the test, naming the
tasks still running, instead of waiting for ever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# Long enough for a framework to close its websockets and HTTP sessions on a loaded machine;
# a cancelled task that outlives it is stuck, not slow.
SHUTDOWN_GRACE_SECONDS = 60.0


class TasksOutlivedShutdown(RuntimeError):
    """Tasks still running after their cancellation and the grace period."""


def run_bounded(main: Coroutine[Any, Any, T], *, grace: float = SHUTDOWN_GRACE_SECONDS) -> T:
    """`asyncio.run(main)`, but the shutdown of what `main` left running is bounded by `grace`.

    The result of `main` (or its exception) is returned as `asyncio.run` would; a leftover task
    that does not end within `grace` seconds of its cancellation raises TasksOutlivedShutdown.
    The default executor is shut down without waiting for its threads (the loop's `close`)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            _cancel_leftovers(loop, grace)
            loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), grace))
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop, grace: float) -> None:
    leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not leftovers:
        return
    for task in leftovers:
        task.cancel()
    _, pending = loop.run_until_complete(asyncio.wait(leftovers, timeout=grace))
    if pending:
        names = ", ".join(sorted(f"{task.get_name()} ({task.get_coro()!r})" for task in pending))
        raise TasksOutlivedShutdown(
            f"{len(pending)} task(s) still running {grace:g} s after their cancellation: {names}"
        )
    for task in leftovers:
        # Retrieve each exception, as asyncio.run does, so that none is logged as never retrieved.
        if not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "unhandled exception during shutdown",
                    "exception": task.exception(),
                    "task": task,
                }
            )
