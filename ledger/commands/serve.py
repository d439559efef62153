"""`ledger serve`: the Streamlit boards on the published copy of the marts.

Safe by default: the boards bind 127.0.0.1, for the operator on this machine, who sees every
tenant. Serving them on any other address needs the access file (ledger/serving/access_file.py), so that every
reader signs in and sees only the tenants it grants them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from ledger.core.child_process import ends_with_this_process
from ledger.core.settings import ENVIRONMENT, REPO_ROOT, Settings
from ledger.serving.access_file import AccessConfig, AccessError, load_access

APP = REPO_ROOT / "dashboards" / "app.py"
LOCALHOST = "127.0.0.1"
_LOCAL_ADDRESSES = {"127.0.0.1", "localhost", "::1"}


class ServeRefused(ValueError):
    """`ledger serve` would expose the boards without sign-in, or cannot sign anyone in."""


def streamlit_command(port: int, *, address: str = LOCALHOST) -> list[str]:
    """`python -m streamlit run dashboards/app.py` headless on `address`:`port` (127.0.0.1 unless
    told otherwise), with the current interpreter."""
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
        # An error a page did not foresee shows Streamlit's redacted message, never a traceback
        # with the server's paths (issue 41); the whole of it goes to the server's log.
        "--client.showErrorDetails",
        "none",
        "--server.address",
        address,
    ]
    return command


def boards_environment(settings: Settings) -> dict[str, str]:
    """The child's environment: the same settings, whatever set them (flags, defaults, env).

    Boards started with an access file are a sign-in deployment (`sign_in_required`): should the
    file go missing later, they deny every request instead of serving the local operator.
    """
    inherited = {k: v for k, v in os.environ.items() if k not in ENVIRONMENT.values()}
    if settings.access_path.exists():
        settings = settings.model_copy(update={"sign_in_required": True})
    return {
        **inherited,
        **settings.as_environment(),
        "LEDGER_ACCESS_FILE": str(settings.access_path),
        # The peer address the access file's trusted_proxies is checked against must be the
        # connection's own: uvicorn would otherwise take it from X-Forwarded-For, which any
        # client on this machine can write.
        "FORWARDED_ALLOW_IPS": "",
    }


def check_access(settings: Settings, address: str) -> AccessConfig | None:
    """The access file the boards will enforce; ServeRefused when `address` is not this machine
    and there is none (AccessError from ledger.serving.access_file when the file is unusable)."""
    config = load_access(settings.access_path)
    if config is None and address not in _LOCAL_ADDRESSES:
        raise ServeRefused(
            f"the boards on {address} would be open to the network without sign-in: write the "
            f"access file {settings.access_path} (mode proxy or oidc, and each reader's tenants; "
            "see docs/boards.md, 'Sign-in') or serve on 127.0.0.1"
        )
    if config is not None and config.mode == "oidc":
        _check_oidc()
    if config is not None and config.mode == "proxy":
        try:
            config.proxy_secret(os.environ)
        except AccessError as exc:
            raise ServeRefused(f"{settings.access_path}: {exc}") from None
    return config


def secrets_files() -> list[Path]:
    """Where Streamlit reads secrets.toml from, for `ledger serve` (its working directory first)."""
    return [Path.cwd() / ".streamlit" / "secrets.toml", Path.home() / ".streamlit" / "secrets.toml"]


OIDC_KEYS = ("redirect_uri", "cookie_secret")


def _check_oidc() -> None:
    import importlib.util
    import tomllib

    if importlib.util.find_spec("authlib") is None:
        raise ServeRefused(
            "access mode oidc signs people in with Streamlit's st.login, which needs the Authlib "
            "package (`make env` installs it), or use mode proxy behind an auth proxy"
        )
    for path in secrets_files():
        try:
            auth = tomllib.loads(path.read_text(encoding="utf-8")).get("auth")
        except FileNotFoundError:
            continue
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ServeRefused(f"{path}: cannot be read as TOML ({type(exc).__name__})") from None
        if not isinstance(auth, dict):
            continue
        missing = [key for key in OIDC_KEYS if not auth.get(key)]
        providers = [value for value in auth.values() if isinstance(value, dict)]
        if not (auth.get("client_id") or any(p.get("client_id") for p in providers)):
            missing.append("client_id (in [auth] or an [auth.<provider>] section)")
        if missing:
            raise ServeRefused(f"{path}: [auth] lacks {', '.join(missing)} for access mode oidc")
        return
    raise ServeRefused(
        "access mode oidc needs an [auth] section (redirect_uri, cookie_secret, client_id, "
        "client_secret, server_metadata_url) in "
        + " or ".join(str(path) for path in secrets_files())
    )


def serve(settings: Settings, port: int, address: str = LOCALHOST) -> None:
    """Print the URL, then serve the boards until interrupted (Ctrl-C)."""
    config = check_access(settings, address)
    if not settings.published_path.exists():
        print(
            f"No published copy at {settings.published_path} yet: the boards will explain how to "
            "load data (`ledger simulate` then `ledger build`).",
            flush=True,
        )
    host = "localhost" if address in _LOCAL_ADDRESSES else address
    if config is None:
        signin = "no access file: this machine only, every tenant"
    else:
        signin = f"sign-in {config.mode}, {len(config.users)} readers in {settings.access_path}"
    print(f"Boards: http://{host}:{port}  ({signin}; Ctrl-C to stop)", flush=True)
    # Killed itself (SIGKILL, a supervisor's restart), this process takes the server with it:
    # an orphan would hold the port against the next `ledger serve`.
    server = subprocess.Popen(
        streamlit_command(port, address=address),
        env=boards_environment(settings),
        preexec_fn=ends_with_this_process(),
    )
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
