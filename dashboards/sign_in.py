"""Who is reading: the sign-in gate of the boards (the access file itself: ledger/serving/access_file.py).

`current_viewer()` answers on every call from the request itself (the proxy's identity header, or
Streamlit's signed-in user), never from anything the page or the URL can set. The connection
(dashboards/connection.py) asks it before every query and gives the reader a database that holds
only their tenants' rows.

It fails closed: in a sign-in deployment (`ledger serve` started with an access file, which sets
`Settings.sign_in_required` for the boards) a missing or unusable file denies every request with a
page and a log line naming the file and the fault; only boards started without a file serve the
local operator. In proxy mode the identity header counts only from the proxy (`trusts`).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ledger.core.settings import Settings
from ledger.serving.access_file import (
    LOCAL_OPERATOR,
    AccessConfig,
    AccessError,
    Viewer,
    load_access,
)


class AccessDenied(PermissionError):
    """The request has no reader the access file grants anything."""


_log = logging.getLogger("ledger.boards")
if not _log.handlers:
    # The boards' log is the server's output (`ledger serve`'s terminal or its service log):
    # Streamlit configures only its own loggers, so this one gets a handler of its own.
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    _log.addHandler(_handler)
    _log.setLevel(logging.INFO)


@dataclass(frozen=True)
class Closed:
    """A sign-in deployment whose access file is missing or unusable: every request is denied."""

    path: Path
    fault: str


def access_path() -> Path:
    return Settings.from_env().access_path


@st.cache_resource(max_entries=4, show_spinner=False)
def _load(path: str, version: str) -> AccessConfig | None:
    # `version` (mtime and size) is part of the cache key only: an edited file is read again.
    # An unusable file raises, and what raises is not cached: it is read again on every run.
    del version
    return load_access(Path(path))


def access_state() -> AccessConfig | Closed | None:
    """The boards' access file now: its config; None in local mode (no file, and `ledger serve`
    started without one); Closed when a sign-in deployment's file is missing or unusable."""
    settings = Settings.from_env()
    path = settings.access_path
    try:
        stat = os.stat(path)
        config = _load(str(path), f"{stat.st_mtime_ns}-{stat.st_size}")
    except FileNotFoundError:
        config = None
    except OSError as exc:
        return _closed(path, f"cannot be read ({exc.strerror})")
    except AccessError as exc:
        return _closed(path, _without_path(path, str(exc)))
    if config is None:
        if settings.sign_in_required:
            return _closed(path, "is missing")
        return None
    if config.mode == "proxy":
        try:
            config.proxy_secret(os.environ)
        except AccessError as exc:
            return _closed(path, str(exc))
    _reopened(path)
    return config


def access_config() -> AccessConfig | None:
    """The access file in force, None when there is none or it cannot be used."""
    state = access_state()
    return state if isinstance(state, AccessConfig) else None


# The faults already logged, by file: the log says once that the boards closed and once that they
# opened again, not on every page run.
_logged: dict[Path, str] = {}
_logged_lock = threading.Lock()


def _closed(path: Path, fault: str) -> Closed:
    with _logged_lock:
        if _logged.get(path) != fault:
            _logged[path] = fault
            _log.error(
                "access file %s: %s; every request to the boards is denied until it is restored",
                path,
                fault,
            )
    return Closed(path, fault)


def _reopened(path: Path) -> None:
    if path not in _logged:
        return
    with _logged_lock:
        if _logged.pop(path, None) is not None:
            _log.warning("access file %s is usable again: the boards serve its readers", path)


def _identity(config: AccessConfig) -> str | None:
    if get_script_run_ctx() is None:
        return None
    if config.mode == "proxy":
        if not _through_proxy(config):
            return None
        return st.context.headers.get(config.header)
    if not _signed_in():
        return None
    email = st.user.get("email")
    return str(email) if email else None


def _through_proxy(config: AccessConfig) -> bool:
    """Whether this request came from a trusted proxy address or carries the proxy's secret."""
    try:
        return config.trusts(st.context.ip_address, st.context.headers, os.environ)
    except AccessError:
        return False


def _signed_in() -> bool:
    # `st.user.is_logged_in` exists only once `[auth]` is configured; read it as a plain key.
    return bool(st.user.get("is_logged_in", False))


def current_viewer() -> Viewer | None:
    """The reader of this request: everyone's tenants for the local operator (local mode, no
    access file); None when the file grants this request nothing, or is missing or unusable in a
    sign-in deployment (fail closed)."""
    state = access_state()
    if state is None:
        return LOCAL_OPERATOR
    if isinstance(state, Closed):
        return None
    return state.grant(_identity(state))


def require_viewer() -> Viewer:
    """The entry file's gate: the reader, or a sign-in prompt / refusal and the end of the run."""
    state = access_state()
    viewer = current_viewer()
    if viewer is not None:
        return viewer
    st.title("Voice session cost ledger")
    if isinstance(state, Closed):
        st.error(
            f"The boards are closed: their access file {state.path} {_fault(state)}. "
            "Every request is denied until the operator restores it."
        )
    elif state is not None and state.mode == "oidc" and not _signed_in():
        st.info("Sign in to see the boards.")
        st.button("Sign in", on_click=st.login, type="primary")
    elif state is not None and state.mode == "proxy" and not _through_proxy(state):
        st.error(
            "Not signed in: this request did not come through the sign-in proxy these boards are "
            "served behind, so the identity it carries is not believed."
        )
    elif state is not None and state.mode == "proxy":
        st.error(
            "Not signed in: these boards are served behind a sign-in proxy, and this request did "
            "not come through it with a known reader."
        )
    else:
        st.error("Your account has no access to these boards; ask the operator to grant it.")
        st.button("Sign out", on_click=st.logout)
    st.stop()
    raise AccessDenied("no reader")  # st.stop() ends the run; outside a run, refuse plainly


def render_sign_out() -> None:
    """A reader signed in by Streamlit (mode oidc) can sign out from every page."""
    config = access_config()
    if config is not None and config.mode == "oidc" and _signed_in():
        st.sidebar.button("Sign out", on_click=st.logout, key="sign_out")


def _without_path(path: Path, message: str) -> str:
    # AccessError names the file on each line; the page and the log name it once, first.
    prefix = f"{path}:"
    return "; ".join(line.removeprefix(prefix).strip() for line in message.splitlines())


def _fault(closed: Closed) -> str:
    if closed.fault == "is missing" or closed.fault.startswith("cannot be read"):
        return closed.fault
    return f"is unusable: {closed.fault}"
