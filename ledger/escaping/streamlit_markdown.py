"""Outside text inside the boards' Markdown: `st.markdown`, `st.caption`, `st.info`, titles,
headers, metric and widget labels (issue 41).

Streamlit's Markdown is GitHub's (ledger.escaping.markdown) plus its own directives, read from
`:`: coloured text and badges (`:red[...]`), icons (`:material/call:`) and emoji shortcodes, so
`:` is escaped too; raw HTML is never enabled on the boards. What a page shows of one value is
bounded (`SCREEN_LIMIT`): a 10,000-character model name is clipped, not a wall of text.
"""

from __future__ import annotations

from collections.abc import Iterable

from ledger.escaping.markdown import INLINE, escape_characters
from ledger.escaping.text import SCREEN_LIMIT, inert

STREAMLIT_INLINE = f"{INLINE}:"


def escape(value: object) -> str:
    """`value` as literal text in any Streamlit element that renders Markdown."""
    return escape_characters(inert(value, SCREEN_LIMIT), STREAMLIT_INLINE)


def escape_all(values: Iterable[object]) -> str:
    """Several values, escaped each and joined with `, ` (a list of tenants in a caption)."""
    return ", ".join(escape(value) for value in values)
