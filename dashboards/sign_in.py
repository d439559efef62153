"""Who is reading: the sign-in gate of the boards (the access file itself: ledger/serving/access_file.py).

`current_viewer()` answers on every call from the request itself (the proxy's identity header, or
Streamlit's signed-in user), never from anything the page or the URL can set. The connection
(dashboards/connection.py) asks it before every query and gives the reader a database that holds
only their tenants' rows.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ledger.core.settings import Settings
from ledger.serving.access_file import LOCAL_OPERATOR, AccessConfig, Viewer, load_access


class AccessDenied(PermissionError):
    """The request has no reader the access file grants anything."""


def access_path() -> Path:
    return Settings.from_env().access_path


@st.cache_resource(max_entries=4, show_spinner=False)
def _load(path: str, version: str) -> AccessConfig | None:
    # `version` (mtime and size) is part of the cache key only: an edited file is read again.
    del version
    return load_access(Path(path))


def access_config() -> AccessConfig | None:
    path = access_path()
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return _load(str(path), f"{stat.st_mtime_ns}-{stat.st_size}")


def _identity(config: AccessConfig) -> str | None:
    if get_script_run_ctx() is None:
        return None
    if config.mode == "proxy":
        return st.context.headers.get(config.header)
    if not _signed_in():
        return None
    email = st.user.get("email")
    return str(email) if email else None


def _signed_in() -> bool:
    # `st.user.is_logged_in` exists only once `[auth]` is configured; read it as a plain key.
    return bool(st.user.get("is_logged_in", False))


def current_viewer() -> Viewer | None:
    """The reader of this request: everyone's tenants for the local operator when there is no
    access file; None when the file grants this request nothing."""
    config = access_config()
    if config is None:
        return LOCAL_OPERATOR
    return config.grant(_identity(config))


def require_viewer() -> Viewer:
    """The entry file's gate: the reader, or a sign-in prompt / refusal and the end of the run."""
    viewer = current_viewer()
    if viewer is not None:
        return viewer
    config = access_config()
    st.title("Voice session cost ledger")
    if config is not None and config.mode == "oidc" and not _signed_in():
        st.info("Sign in to see the boards.")
        st.button("Sign in", on_click=st.login, type="primary")
    elif config is not None and config.mode == "proxy":
        st.error(
            "Not signed in: these boards are served behind a sign-in proxy, and this request did "
            "not come through it with a known reader."
        )
    else:
        st.error("Your account has no access to these boards; ask the operator to grant it.")
        st.button("Sign out", on_click=st.logout)
    st.stop()
    raise AccessDenied("no reader")  # st.stop() ends the run; outside a run, refuse plainly
