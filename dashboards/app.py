"""Entry file of the boards: owns navigation, the shared sidebar and the empty-warehouse guide.

Run with `ledger serve` (or `streamlit run dashboards/app.py`); LEDGER_HOME says whose published
copy to read, `$LEDGER_HOME/access.yaml` (ledger/serving/access_file.py) who may read it.
"""

from __future__ import annotations

import streamlit as st

from dashboards.connection import current_version, publication, published_path
from dashboards.filters import explain_empty, render_sidebar
from dashboards.sign_in import render_sign_out, require_viewer
from ledger.escaping.streamlit_markdown import escape, escape_all
from ledger.serving.links import BOARD_PAGES, DEFAULT_PAGE

st.set_page_config(page_title="Voice ledger boards", page_icon=":material/call:", layout="wide")

PAGES = [
    st.Page(
        f"app_pages/{page.name}.py",
        title=page.title,
        icon=page.icon,
        default=page.name == DEFAULT_PAGE,
    )
    for page in BOARD_PAGES
]

page = st.navigation(PAGES)
# The gate: with an access file, nothing below runs for a request without a granted reader, and
# every query then runs on that reader's tenants only (dashboards/connection.py).
viewer = require_viewer()
version = current_version()
published = publication(version) if version else None
if published is None:
    explain_empty(str(published_path()))
    st.stop()
render_sidebar(published)
if viewer.tenants is not None:
    st.sidebar.caption(
        f"Signed in as {escape(viewer.identity)}: tenants {escape_all(viewer.tenants)}"
    )
render_sign_out()
page.run()
