"""Outside text inside a Markdown document (CommonMark with GitHub's extensions: tables,
strikethrough, autolinked URLs and e-mail addresses, `$` math), e.g. the weekly review's `.md`.

Every ASCII punctuation character that opens or closes an inline construct (emphasis, code, links
and images, raw HTML, entities, table cells, math) is backslash-escaped, and a value that begins
a line cannot begin a block (heading, quote, list, rule). A backslash escape is not enough against
GFM's autolinks: the renderer finds `https://`, `www.` and `name@host.domain` in the text after
escapes are resolved (remark-gfm, which Streamlit and GitHub use, does), so a word joiner (U+2060,
invisible) is written inside each of those shapes to break them.
"""

from __future__ import annotations

import re

from ledger.escaping.text import inert

INLINE = "\\`*_[]()<>!|~&$"
# A line that starts with one of these, or with digits and `.` or `)`, is a block's marker.
BLOCK_STARTS = re.compile(r"^(?:[#>+=-]|[0-9]+[.)])")
WORD_JOINER = "\u2060"
# The shapes GFM links without brackets: a scheme's `://`, a `www.` host and an e-mail's `@`.
AUTOLINK_SHAPES = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\.)|(?<=@)", re.IGNORECASE)


def escape_characters(text: str, characters: str) -> str:
    """`text` with each of `characters` backslash-escaped, its line start unable to open a block
    and its autolink shapes broken (for this module and Streamlit's, which escapes more)."""
    escaped = "".join(f"\\{char}" if char in characters else char for char in text)
    start = BLOCK_STARTS.match(escaped)
    if start:
        marker = start.end() - 1
        escaped = f"{escaped[:marker]}\\{escaped[marker:]}"
    return AUTOLINK_SHAPES.sub(WORD_JOINER, escaped)


def escape(value: object, limit: int | None = None) -> str:
    """`value` as literal text in a Markdown document (also inside a table cell)."""
    return escape_characters(inert(value, limit), INLINE)
