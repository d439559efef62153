"""SQL literals for the few statements that take no parameters (ATTACH, COPY, SET, dbt vars).

Values otherwise travel as parameters (`?`); these helpers are for text DuckDB cannot bind.

    >>> literal("it's")
    "'it''s'"
    >>> literal_list(["a", "b"])
    "('a', 'b')"
"""

from __future__ import annotations

from collections.abc import Iterable


def literal(value: str) -> str:
    """A SQL string literal: single quotes, embedded quotes doubled."""
    return "'" + str(value).replace("'", "''") + "'"


def literal_list(values: Iterable[str]) -> str:
    """A parenthesised list of string literals, for `in (...)`."""
    return "(" + ", ".join(literal(v) for v in values) + ")"


def identifier(name: str) -> str:
    """A quoted SQL identifier (a column or table name as it is, any character): double quotes,
    embedded ones doubled."""
    return '"' + name.replace('"', '""') + '"'
