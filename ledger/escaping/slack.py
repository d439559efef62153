"""Outside text inside a Slack message: the `text` fallback and the mrkdwn of its blocks.

Slack reads `<...>` as a control sequence (`<!channel>` pings everyone, `<https://x|label>` is a
link under any label, `<@U123>` a mention) and has exactly three escapes, `&amp;`, `&lt;` and
`&gt;`, which disarm all of them. Emphasis markers (`*`, `_`, `~`, a backquote) have no escape
in mrkdwn: a word joiner (U+2060, invisible) is written before each, so a name can never bold,
strike or quote part of the message; and, as in Markdown, inside the shapes Slack links without
brackets (`https://`, `www.`, `name@host.domain`). A value is bounded (`SCREEN_LIMIT`) so one long
name cannot push a message over Slack's block limit (3,000 characters).
"""

from __future__ import annotations

import re

from ledger.escaping.markdown import AUTOLINK_SHAPES, WORD_JOINER
from ledger.escaping.text import SCREEN_LIMIT, inert

CONTROL_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
EMPHASIS = re.compile(r"(?=[*_~`])")


def escape(value: object) -> str:
    """`value` as literal text in a Slack message's `text` or a mrkdwn text object."""
    text = "".join(CONTROL_ESCAPES.get(char, char) for char in inert(value, SCREEN_LIMIT))
    text = EMPHASIS.sub(WORD_JOINER, text)
    return AUTOLINK_SHAPES.sub(WORD_JOINER, text)


def link(url: str, label: str) -> str:
    """A link of ours (`<url|label>`): the URL is the boards' own, built by
    ledger.serving.links with its parameters percent-encoded, so `|` and `>` cannot occur in it;
    the label is escaped like any text."""
    return f"<{url}|{escape(label)}>"
