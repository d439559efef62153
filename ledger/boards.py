"""`ledger serve`: the Streamlit boards on the published copy of the marts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

from ledger.settings import REPO_ROOT, Settings

APP = REPO_ROOT / "dashboards" / "app.py"


def streamlit_command(port: int, *, address: str | None = None) -> list[str]:
    """`python -m streamlit run dashboards/app.py` headless on `port`, with the current interpreter."""
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        # A product, not a notebook: no "Deploy" button or developer menu for its readers.
        "--client.toolbarMode",
        "viewer",
    ]
    if address:
        command += ["--server.address", address]
    return command


def boards_environment(settings: Settings) -> dict[str, str]:
    """The child's environment: the same settings, whatever set them (flags, defaults, env)."""
    return {
        **os.environ,
        "LEDGER_HOME": str(settings.home),
        "LEDGER_REFERENCE_DIR": str(settings.reference_dir),
        "LEDGER_REPORTING_CURRENCY": settings.reporting_currency,
        "LEDGER_TIMEZONE": settings.timezone,
    }


def serve(settings: Settings, port: int) -> None:
    """Print the URL, then serve the boards until interrupted (Ctrl-C)."""
    if not settings.published_path.exists():
        print(
            f"No published copy at {settings.published_path} yet: the boards will explain how to "
            "load data (`ledger simulate` then `ledger build`).",
            flush=True,
        )
    print(f"Boards: http://localhost:{port}  (Ctrl-C to stop)", flush=True)
    server = subprocess.Popen(streamlit_command(port), env=boards_environment(settings))
    if threading.current_thread() is threading.main_thread():
        # `kill <pid>` of this process stops the server too, as Ctrl-C does.
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        returncode = server.wait()
    except KeyboardInterrupt:
        # Ctrl-C in a terminal reaches both processes; a signal sent to this one alone must not
        # leave the server running behind it.
        _stop(server)
        return
    if returncode not in (0, -signal.SIGINT, -signal.SIGTERM):
        raise SystemExit(
            f"the boards stopped with exit code {returncode}. If port {port} is taken, "
            f"try another: `ledger serve --port {port + 1}`."
        )


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
