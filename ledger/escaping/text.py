"""What every medium does to outside text first: characters that act instead of showing are spelt
out, and a screen gets a bounded length.

A control character (a newline in a table cell, an escape sequence, a NUL) would break the line or
the table it lands in; a direction override (U+202E) makes `gpt-4o\u202ecod.exe` read as another
name. Both are written as their escape (`\\x0a`, `\\u202e`), so the reader sees that they are there
and what they are, and nothing they would do happens.
"""

from __future__ import annotations

import unicodedata

# What a board, an alert or a review shows of one value: a legitimate identifier is at most 128
# characters (SPEC 3), a longer text is clipped with the count of what was left out.
SCREEN_LIMIT = 160
ELLIPSIS = "…"


def _spelt(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _acts(char: str) -> bool:
    """A control (Cc), format (Cf: direction marks and overrides, zero-width characters), line or
    paragraph separator (Zl, Zp), surrogate or unassigned code point."""
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Cn")


def inert(value: object, limit: int | None = None) -> str:
    """`value` as text whose every character shows as itself; at most `limit` characters of the
    value kept (then `…` and how many were left out)."""
    text = "" if value is None else str(value)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}{ELLIPSIS} ({len(text) - limit:,} more characters)"
    if text.isascii() and text.isprintable():
        return text
    return "".join(_spelt(char) if _acts(char) else char for char in text)
