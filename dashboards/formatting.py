"""How numbers are shown to people: money rounded half-even to 2 places with its currency.

The marts keep DECIMAL(38, 12); rounding happens only here, at the last step before a person reads
the number (SPEC 5). Tables and charts get the rounded value as a float so they sort and plot: a
value already rounded to cents survives the trip to a double and back to "%.2f" unchanged.
"""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal

from ledger.core.numbers import round_money, shown_change, small_money
from ledger.core.ratios import ratio

NO_VALUE = "—"


def money(value: Decimal | int | None, currency: str) -> str:
    """`CNY 1,234.56`, `CNY -0.50`; a non-zero amount under half a cent to 4 places (`CNY 0.0043`,
    `CNY < 0.0001`), never `CNY 0.00`; `—` when unknown."""
    rounded = round_money(value)
    if rounded is None:
        return NO_VALUE
    if rounded == 0 and value != 0:
        return f"{currency} {small_money(Decimal(value))}"
    return f"{currency} {rounded:,.2f}"


def money_float(value: Decimal | int | None) -> float | None:
    """The half-even cent value as a float, for sortable tables and charts."""
    rounded = round_money(value)
    # + 0.0: a value that rounds to zero from below is 0.00, never "-0.00".
    return None if rounded is None else float(rounded) + 0.0


def percent(value: Decimal | float | None, places: int = 1) -> str:
    """A value already in percent (e.g. gross margin %) as `41.3%`, rounded half-even."""
    if value is None:
        return NO_VALUE
    quantum = Decimal(1).scaleb(-places)
    rounded = Decimal(str(value)).quantize(quantum, rounding=ROUND_HALF_EVEN)
    return f"{rounded:,.{places}f}%"


def share(value: float | Decimal | None, places: int = 1) -> str:
    """A share in [0, 1] (a rate) as a percentage: 0.125 -> `12.5%`."""
    if value is None or pd_missing(value):
        return NO_VALUE
    return percent(Decimal(str(value)) * 100, places)


def share_float(value: float | Decimal | None, places: int = 1) -> float | None:
    """A share in [0, 1] as a percentage number rounded half-even, for tables and charts."""
    if value is None:
        return None
    quantum = Decimal(1).scaleb(-places)
    return float((Decimal(str(value)) * 100).quantize(quantum, rounding=ROUND_HALF_EVEN))


def pct_float(value: float | Decimal | None, places: int = 2) -> float | None:
    """A value already in percent, rounded half-even, for tables and charts."""
    if value is None:
        return None
    quantum = Decimal(1).scaleb(-places)
    return float(Decimal(str(value)).quantize(quantum, rounding=ROUND_HALF_EVEN))


def money_delta(current: Decimal | None, previous: Decimal | None, currency: str) -> str | None:
    """Change against the previous period: `+CNY 1.20 (+10.9%)`; None when it cannot be said."""
    if current is None or previous is None:
        return None
    exact = Decimal(current) - Decimal(previous)
    # The change shown is the difference of the amounts shown (1.89 -> 1.97 reads +0.08, never
    # +0.09), so it adds up with them; its parts (tenants, effects) are rounded to add up to it.
    shown = shown_change(Decimal(current), Decimal(previous))
    # The sign is the exact change's when nothing is left to show, so a fall smaller than a cent
    # still reads as a fall.
    sign = "+" if (shown > 0 or (shown == 0 and exact >= 0)) else "-"
    # A change that leaves the cents alike is said to 4 places (never "+CNY 0.00 (+4.5%)").
    size = small_money(abs(exact)) if shown == 0 and exact != 0 else f"{abs(shown):,.2f}"
    text = f"{sign}{currency} {size}"
    relative = ratio(Decimal(current) - Decimal(previous), abs(Decimal(previous)))
    if relative is not None:
        text += f" ({'+' if relative >= 0 else ''}{percent(relative * 100)})"
    return text


def points_delta(current: Decimal | float | None, previous: Decimal | float | None) -> str | None:
    """Change of a percentage between periods, in percentage points: `+2.5 pp`."""
    if current is None or previous is None:
        return None
    exact = Decimal(str(current)) - Decimal(str(previous))
    change = abs(exact).quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN)
    # No "+-0.0": the sign is the exact change's, a change that rounds to nothing has none.
    if change == 0:
        return "0.0 pp"
    return f"{'+' if exact > 0 else '-'}{change:,.1f} pp"


def count_delta(current: int | None, previous: int | None) -> str | None:
    """Change of a count: `+12`, `-3`, `0`."""
    if current is None or previous is None:
        return None
    change = int(current) - int(previous)
    return f"{change:+,}" if change else "0"


def ms_delta(current: float | Decimal | None, previous: float | Decimal | None) -> str | None:
    """Change of a duration: `+12.5 ms`."""
    if current is None or previous is None or pd_missing(current) or pd_missing(previous):
        return None
    exact = Decimal(str(current)) - Decimal(str(previous))
    change = abs(exact).quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN)
    if change == 0:
        return "0.0 ms"
    return f"{'+' if exact > 0 else '-'}{change:,.1f} ms"


def share_delta(current: float | Decimal | None, previous: float | Decimal | None) -> str | None:
    """Change of a rate in [0, 1], in percentage points."""
    if current is None or previous is None or pd_missing(current) or pd_missing(previous):
        return None
    return points_delta(Decimal(str(current)) * 100, Decimal(str(previous)) * 100)


def pd_missing(value: object) -> bool:
    return isinstance(value, float) and value != value  # NaN


def milliseconds(value: float | Decimal | None) -> str:
    if value is None or pd_missing(value):
        return NO_VALUE
    rounded = Decimal(str(value)).quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN)
    return f"{rounded:,.1f} ms"


def lag_text(published_at: datetime, newest: datetime | None) -> str:
    """How far the data trails its publication: `2 d 4 h 5 min`; `—` without events."""
    if newest is None:
        return NO_VALUE
    minutes = max(int((published_at - newest).total_seconds() // 60), 0)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [f"{days:,} d"] if days else []
    if days or hours:
        parts.append(f"{hours} h")
    parts.append(f"{minutes} min")
    return " ".join(parts)
