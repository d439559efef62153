"""Outside text inside HTML or SVG (the weekly review's HTML document): the characters that open
markup or end an attribute (`& < > " '`) written as entities, after the control and direction
characters are spelt out (ledger.escaping.text)."""

from __future__ import annotations

import html as stdlib_html

from ledger.escaping.text import inert


def escape(value: object) -> str:
    """`value` as literal text in an HTML element or a quoted attribute."""
    return stdlib_html.escape(inert(value), quote=True)
