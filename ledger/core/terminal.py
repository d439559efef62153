"""Text that reaches a terminal: names from outside (file names) never carry control characters."""

from __future__ import annotations


def printable(text: object) -> str:
    """`text` with every character that is not printable written as its escape (`\\x1b`, `\\n`,
    `\\u202e`, `\\udcff` for an undecodable byte of a file name), so a name cannot recolour, move the
    cursor, clear or reorder what the terminal shows. Printable characters, accents and CJK
    included, are kept as they are."""
    return "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        for char in str(text)
    )
