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

# An emoji favicon is drawn in the page (a data: URL); a Material one is fetched from
# fonts.gstatic.com, the one request the boards made outside their own address (issue 41).
st.set_page_config(page_title="Voice ledger boards", page_icon="📞", layout="wide")

PAGES = [
    st.Page("app_pages/overview.py", title="Overview", icon=":material/dashboard:", default=True),
    st.Page("app_pages/anomalies.py", title="Anomaly inbox", icon=":material/notifications:"),
    st.Page("app_pages/margin.py", title="Margin", icon=":material/payments:"),
    st.Page("app_pages/experience.py", title="Experience", icon=":material/timer:"),
    st.Page("app_pages/combined.py", title="Margin × experience", icon=":material/join:"),
    st.Page("app_pages/sessions.py", title="Session explorer", icon=":material/search:"),
    st.Page("app_pages/data_quality.py", title="Data quality", icon=":material/rule:"),
    st.Page("app_pages/operations.py", title="Operations", icon=":material/dns:"),
    st.Page("app_pages/slo.py", title="Latency SLOs", icon=":material/speed:"),
    st.Page("app_pages/budgets.py", title="Spend budgets", icon=":material/savings:"),
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
