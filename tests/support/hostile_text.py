"""The hostile corpus (issue 41): text an outsider can put into events, reference data or a URL,
and the checks that it reached a medium as data, never as markup.

`IDENTIFIERS` pass the contract (printable ASCII, no spaces, at most 128 characters, no personal
data), so any token holder can send them as a tenant, provider or model name; `TEXTS` are what a
URL or a reference file can carry besides (spaces, control characters, a direction override, a
very long line).
"""

from __future__ import annotations

import csv
import io
import re

from markdown_it import MarkdownIt

from ledger.serving.links import PAGE_PATHS

MARKDOWN_LINKS = "[..](https://evil.example/login)![t](http://x/r.png)"
SLACK_CONTROLS = "<!channel><https://evil.example/x|Open_billing>"
FORMULA = "=2+5"
IDENTIFIERS = (
    MARKDOWN_LINKS,
    SLACK_CONTROLS,
    FORMULA,
    "+SUM(A1:A9)",
    "-2+3",
    "@cmd",
    "<img/src=x/onerror=alert(1)>",
    "*bold*_italic_~strike~`code`",
    ":red[alert]:material/warning:$x^2$",
    "www.evil.example",
    "#heading",
    "1.listed",
    "&lt;b&gt;",
    "<@U0123>",
)
TEXTS = (
    *IDENTIFIERS,
    "[Open billing](https://evil.example/login) now",
    "\tleading tab",
    "\r=1+1",
    "line\nbreak | pipe",
    "\x1b[31mred\x1b[0m\x00",
    "gpt-4o\u202egnp.exe",
    "A" * 10_000,
)

# GitHub's autolink literals, as remark-gfm (Streamlit's Markdown) finds them in the text after
# escapes are resolved: the two expressions of mdast-util-gfm-autolink-literal.
AUTOLINK_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE | re.ASCII)
AUTOLINK_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)
# Streamlit's directives (`:red[...]`, `:material/icon:`) and math, unescaped in the source.
STREAMLIT_DIRECTIVE = re.compile(r"(?<!\\):[a-z]+(?:-[a-z]+)*\[|(?<!\\):material/|(?<!\\)\$")
_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# A link of the boards' own into another page (ledger.serving.links.relative_board_link).
BOARD_LINK = re.compile(rf"(?:\./|(?:{'|'.join(PAGE_PATHS)}))(?:\?[^()\s]*)?")


def live_markdown(source: str, *, streamlit: bool = True) -> list[str]:
    """What the Markdown `source` would make act rather than show: links (but the boards' own into
    their pages), images, raw HTML, autolinks (bracketed or GitHub's literal ones), and on the
    boards (`streamlit`) Streamlit's directives and math."""
    found = [m.group(0) for m in STREAMLIT_DIRECTIVE.finditer(source)] if streamlit else []
    for block in _MARKDOWN.parse(source):
        for token in block.children or []:
            if token.type == "link_open" and BOARD_LINK.fullmatch(str(token.attrs["href"])):
                continue
            if token.type in ("link_open", "image", "html_inline"):
                found.append(f"{token.type} {token.attrs or token.content}")
            elif token.type == "text":
                found += [m.group(0) for m in AUTOLINK_URL.finditer(token.content)]
                found += [m.group(0) for m in AUTOLINK_EMAIL.finditer(token.content)]
        if block.type == "html_block":
            found.append(f"html_block {block.content}")
    return found


# Slack's control sequences: `<!channel>`, `<@U123>`, `<https://...|label>`.
SLACK_SEQUENCE = re.compile(r"<[^<>]*>")


def live_slack(text: str, ours: tuple[str, ...] = ()) -> list[str]:
    """What a Slack mrkdwn `text` would make act, other than `ours` (the links we wrote, bare or
    as `<url|label>`): control sequences, autolinked URLs and addresses."""
    found = SLACK_SEQUENCE.findall(text)
    outside = SLACK_SEQUENCE.sub(" ", text)
    found += [m.group(0) for m in AUTOLINK_URL.finditer(outside)]
    found += [m.group(0) for m in AUTOLINK_EMAIL.finditer(outside)]
    return [live for live in found if live not in ours]


def formula_cells(csv_text: str) -> list[str]:
    """The cells of a CSV a spreadsheet would evaluate (or whose first character it drops)."""
    return [
        cell
        for row in csv.reader(io.StringIO(csv_text, newline=""))
        for cell in row
        if cell[:1] in ("=", "+", "@", "\t", "\r")
        or (cell.startswith("-") and not re.fullmatch(r"-[0-9.]+", cell))
    ]
