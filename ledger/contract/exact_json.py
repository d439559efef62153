"""JSON numbers kept as they were sent, for Python code that reads events and writes them back.

`json.loads` reads a number with a fraction or an exponent as a float, the nearest double:
0.10000000000000000000000001 becomes 0.1 and 123456789012.123456 becomes 123456789012.12346, and
`json.dumps` writes that. A decimal field is judged and stored by the number's own text (SPEC 3,
`ledger.ingest.validation`), so code that reads a line must keep that text: `loads` gives such a
number as a `JsonNumber` (a float that remembers its text) and `dumps` writes it back as sent.
"""

from __future__ import annotations

import json
from typing import Any


class JsonNumber(float):
    """A JSON number with a fraction or an exponent, with the text it was sent as."""

    text: str

    def __new__(cls, text: str) -> JsonNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number


class JsonInteger(int):
    """The JSON integer -0: 0 as a Python int, but a decimal field refuses it (SPEC 3)."""

    text: str

    def __new__(cls, text: str) -> JsonInteger:
        number = super().__new__(cls, text)
        number.text = text
        return number


def _integer(text: str) -> int:
    # Only -0 loses anything as an int (its sign); every other integer reads exactly.
    return JsonInteger(text) if text == "-0" else int(text)


def loads(text: str) -> Any:
    """`json.loads`, with every number that has a fraction or an exponent as a `JsonNumber` and
    the integer -0 as a `JsonInteger` (written back as sent)."""
    return json.loads(text, parse_float=JsonNumber, parse_int=_integer)


def dumps(value: Any) -> str:
    """`json.dumps` (default separators), writing each `JsonNumber` as the text it was sent as."""
    if isinstance(value, (JsonNumber, JsonInteger)):
        return value.text
    if isinstance(value, dict):
        members = (f"{json.dumps(key)}: {dumps(item)}" for key, item in value.items())
        return "{" + ", ".join(members) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dumps(item) for item in value) + "]"
    return json.dumps(value)
