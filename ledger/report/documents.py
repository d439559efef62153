"""The review as documents people read: Markdown summary, self-contained HTML (inline SVG charts,
no script, no network), and an XLSX workbook of the tables.

Tenant, provider and model names, causes and every other text cell come from events and reference
data: each is escaped for its document (ledger.escaping.markdown and .html), and the workbook
writes text as text cells, never as formulas (issue 41)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import xlsxwriter

from ledger.core.numbers import money, percent, points, round_money
from ledger.core.vocabulary import COMPONENT_COLOURS, COMPONENTS
from ledger.escaping import html, markdown
from ledger.report.sections import review_tables
from ledger.report.tables import Table, format_cell
from ledger.report.weekly import WeeklyReview

HUNDRED = Decimal(100)


def headline(review: WeeklyReview) -> list[str]:
    """The few sentences finance reads first."""
    total, before = review.total, review.previous_total
    cur = review.currency
    lines = [
        f"Revenue {money(total['revenue'], cur)}, cost {money(total['total_cost'], cur)}, "
        f"gross margin {money(total['gross_margin'], cur)} ({percent(total.gross_margin_pct)}) "
        f"across {len(review.tenants)} tenants and {int(total['session_count']):,} sessions."
    ]
    if review.previous and before["revenue"]:
        change = HUNDRED * (total["revenue"] - before["revenue"]) / before["revenue"]
        margin_move = (
            None
            if total.gross_margin_pct is None or before.gross_margin_pct is None
            else total.gross_margin_pct - before.gross_margin_pct
        )
        lines.append(
            f"Against {review.previous_week}: revenue {percent(change, signed=True)}, "
            f"margin {points(margin_move, signed=True)}."
        )
    lines.append(
        f"Interruption waste {money(total['interruption_waste_cost'], cur)}; cache savings "
        f"{money(total['cache_savings'], cur)}."
    )
    paged = [a for a in review.anomalies if a.severity != "info"]
    lines.append(
        f"{len(review.anomalies)} cost anomalies recorded ({len(paged)} paged)."
        if review.anomalies
        else "No cost anomalies recorded."
    )
    if review.restatements:
        weeks = sorted({r.iso_week for r in review.restatements})
        lines.append(f"Restated: {', '.join(weeks)} (late events; see Restatements).")
    if review.days_closed < 7:
        lines.append(
            f"Only {review.days_closed} of 7 days are closed in the data: figures may still move."
        )
    if review.replay_sessions:
        lines.append(
            f"{review.replay_sessions:,} replayed sessions (`ledger replay` copies) are excluded "
            "from every figure."
        )
    return lines


def _title(review: WeeklyReview) -> str:
    return (
        f"Weekly margin review {review.iso_week} "
        f"({review.week_start.isoformat()} to {review.week_end.isoformat()}, {review.timezone})"
    )


# ---- Markdown ------------------------------------------------------------------------------------


def _markdown_table(table: Table) -> list[str]:
    lines = [f"## {table.title}", ""]
    if table.rows:
        lines.append("| " + " | ".join(c.title for c in table.columns) + " |")
        lines.append(
            "|" + "|".join("---" if c.kind == "text" else "---:" for c in table.columns) + "|"
        )
        rows = table.rows + ([table.total] if table.total else [])
        for index, row in enumerate(rows):
            cells = [
                markdown.escape(v) if isinstance(v, str) else format_cell(v, c.kind)
                for v, c in zip(row, table.columns, strict=True)
            ]
            if table.total and index == len(rows) - 1:
                cells = [f"**{cell}**" for cell in cells]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if table.note:
        lines += [table.note, ""]
    return lines


def render_markdown(review: WeeklyReview) -> str:
    lines = [f"# {_title(review)}", ""]
    lines += [f"- {line}" for line in headline(review)]
    lines += [
        "",
        f"Amounts in {review.currency}, rounded half-even to 2 places; totals are sums of the "
        "unrounded ledger amounts.",
        "",
    ]
    for table in review_tables(review):
        lines += _markdown_table(table)
    lines.append(f"_Generated {review.generated_at:%Y-%m-%d %H:%M} UTC by the voice ledger._")
    return "\n".join(lines) + "\n"


# ---- HTML ----------------------------------------------------------------------------------------

_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:72rem;
color:#1f2933;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d9e2ec}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{padding:.3rem .6rem;border-bottom:1px solid #e4e7eb}th{background:#f5f7fa;text-align:left}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:600;border-top:2px solid #9aa5b1}
.note{color:#52606d;font-size:.85rem}.summary li{margin:.2rem 0}
.sev-critical{color:#b42318;font-weight:600}.sev-warning{color:#b54708;font-weight:600}
.legend span{display:inline-block;margin-right:1rem;font-size:.85rem}
.legend i{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:middle}
"""


def _html_table(table: Table) -> str:
    parts = [f'<h2 id="{table.key}">{html.escape(table.title)}</h2>']
    if table.rows:
        head = "".join(
            f'<th class="{"" if c.kind == "text" else "num"}">{html.escape(c.title)}</th>'
            for c in table.columns
        )
        body = []
        rows = [(r, "") for r in table.rows] + ([(table.total, "total")] if table.total else [])
        for row, css in rows:
            cells = []
            for value, column in zip(row, table.columns, strict=True):
                text = html.escape(format_cell(value, column.kind))
                klass = "" if column.kind == "text" else "num"
                if column.title == "severity":
                    klass = f"sev-{value}"
                cells.append(f'<td class="{klass}">{text}</td>')
            body.append(f'<tr class="{css}">{"".join(cells)}</tr>')
        parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")
    if table.note:
        parts.append(f'<p class="note">{html.escape(table.note)}</p>')
    return "\n".join(parts)


def _cost_chart(review: WeeklyReview) -> str:
    """Horizontal stacked bars: each tenant's cost by component."""
    width, label_width, bar_height, gap = 720, 140, 22, 8
    largest = max((w["total_cost"] for w in review.tenants), default=Decimal(0))
    if largest <= 0:
        return ""
    scale = Decimal(width - label_width - 90) / largest
    rows = []
    for index, week in enumerate(review.tenants):
        y = index * (bar_height + gap)
        x = Decimal(label_width)
        rows.append(
            f'<text x="{label_width - 8}" y="{y + 15}" text-anchor="end" font-size="12">'
            f"{html.escape(week.tenant_id)}</text>"
        )
        for component in COMPONENTS:
            length = week[f"{component}_cost"] * scale
            if length <= 0:
                continue
            rows.append(
                f'<rect x="{x:.1f}" y="{y}" width="{length:.1f}" height="{bar_height}" '
                f'fill="{COMPONENT_COLOURS[component]}"><title>{component}: '
                f"{money(week[f'{component}_cost'], review.currency)}</title></rect>"
            )
            x += length
        rows.append(
            f'<text x="{x + 6:.1f}" y="{y + 15}" font-size="12">{money(week["total_cost"])}</text>'
        )
    height = len(review.tenants) * (bar_height + gap)
    legend = "".join(
        f'<span><i style="background:{colour}"></i>{name}</span>'
        for name, colour in COMPONENT_COLOURS.items()
    )
    return (
        f'<h2 id="chart_cost">Cost by component ({review.currency})</h2>'
        f'<svg role="img" aria-label="cost by component per tenant" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">{"".join(rows)}</svg>'
        f'<div class="legend">{legend}</div>'
    )


def _margin_chart(review: WeeklyReview) -> str:
    """Gross margin % per tenant, this week (dark) next to the week before (light)."""
    width, label_width, bar_height = 720, 140, 10
    rows = []
    for index, week in enumerate(review.tenants):
        y = index * 30
        rows.append(
            f'<text x="{label_width - 8}" y="{y + 14}" text-anchor="end" font-size="12">'
            f"{html.escape(week.tenant_id)}</text>"
        )
        before = review.previous.get(week.tenant_id)
        pairs = [(week.gross_margin_pct, "#243b53", 0, review.iso_week)]
        if before is not None:
            pairs.append((before.gross_margin_pct, "#9fb3c8", bar_height + 2, review.previous_week))
        for value, colour, offset, label in pairs:
            if value is None:
                continue
            length = max(value, Decimal(0)) * Decimal(width - label_width - 70) / HUNDRED
            rows.append(
                f'<rect x="{label_width}" y="{y + offset}" width="{length:.1f}" '
                f'height="{bar_height}" fill="{colour}"><title>{label}: {percent(value)}'
                f"</title></rect>"
                f'<text x="{label_width + length + 6:.1f}" y="{y + offset + 9}" '
                f'font-size="10">{percent(value)}</text>'
            )
    height = len(review.tenants) * 30
    return (
        f'<h2 id="chart_margin">Gross margin % ({review.iso_week} dark, '
        f"{review.previous_week} light)</h2>"
        f'<svg role="img" aria-label="gross margin percent per tenant" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">{"".join(rows)}</svg>'
    )


def render_html(review: WeeklyReview) -> str:
    tables = review_tables(review)
    summary = "".join(f"<li>{html.escape(line)}</li>" for line in headline(review))
    body = [
        f"<h1>{html.escape(_title(review))}</h1>",
        f'<ul class="summary">{summary}</ul>',
        f'<p class="note">Amounts in {review.currency}, rounded half-even to 2 places; totals are '
        "sums of the unrounded ledger amounts.</p>",
        _html_table(tables[0]),
        _margin_chart(review),
        _cost_chart(review),
        *(_html_table(t) for t in tables[1:]),
        f'<p class="note">Generated {review.generated_at:%Y-%m-%d %H:%M} UTC by the voice '
        "ledger.</p>",
    ]
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(_title(review))}</title><style>{_CSS}</style></head>"
        f"<body>\n{chr(10).join(body)}\n</body></html>\n"
    )


# ---- XLSX ----------------------------------------------------------------------------------------


def write_xlsx(review: WeeklyReview, path: Path) -> None:
    """One sheet per table. Money cells are numbers shown to 2 places; the total rows are the
    Decimal totals (rounded half-even to the cent), not spreadsheet formulas over rounded cells."""
    workbook = xlsxwriter.Workbook(str(path))
    bold = workbook.add_format({"bold": True})
    fmt = {
        "money": workbook.add_format({"num_format": "#,##0.00"}),
        "signed_money": workbook.add_format({"num_format": "+#,##0.00;-#,##0.00;0.00"}),
        "rate": workbook.add_format({"num_format": "0.0000"}),
        "pct": workbook.add_format({"num_format": "0.0"}),
        "signed_pct": workbook.add_format({"num_format": "+0.0;-0.0;0.0"}),
        "points": workbook.add_format({"num_format": "+0.0;-0.0;0.0"}),
        "int": workbook.add_format({"num_format": "#,##0"}),
    }
    total_fmt = {
        kind: workbook.add_format({"bold": True, "num_format": f.num_format})
        for kind, f in fmt.items()
    }
    summary = workbook.add_worksheet("summary")
    summary.write(0, 0, _title(review), bold)
    for index, line in enumerate(headline(review), start=2):
        summary.write_string(index, 0, line)
    summary.set_column(0, 0, 110)
    for table in review_tables(review):
        sheet = workbook.add_worksheet(table.key[:31])
        for col, column in enumerate(table.columns):
            percent_kind = column.kind in ("pct", "signed_pct") and "%" not in column.title
            title = column.title + (" (%)" if percent_kind else "")
            sheet.write(0, col, title, bold)
            sheet.set_column(col, col, max(12, min(60, len(column.title) + 4)))
        # The header stays in view and every column filters and sorts (the total row, below the
        # range, is left out of both).
        sheet.freeze_panes(1, 0)
        if table.rows:
            sheet.autofilter(0, 0, len(table.rows), len(table.columns) - 1)
        rows = table.rows + ([table.total] if table.total else [])
        for r, row in enumerate(rows, start=1):
            is_total = table.total is not None and r == len(rows)
            for c, (value, column) in enumerate(zip(row, table.columns, strict=True)):
                formats = total_fmt if is_total else fmt
                if value is None:
                    sheet.write_blank(r, c, None)
                elif isinstance(value, Decimal):
                    shown = (
                        round_money(value) if column.kind in ("money", "signed_money") else value
                    )
                    # Excel stores doubles: the cell holds the cent-rounded figure the documents
                    # show, so a reader summing the column sees the same cents.
                    sheet.write_number(r, c, float(shown), formats.get(column.kind))
                elif isinstance(value, int):
                    sheet.write_number(r, c, value, formats.get("int"))
                else:
                    sheet.write_string(r, c, str(value), bold if is_total else None)
        if table.note:
            sheet.write_string(len(rows) + 2, 0, table.note)
    workbook.close()
