"""How numbers are shown to people, everywhere (alerts, weekly review; the boards build on it):
money half-even to 2 places, never through a float; an unknown value is never shown as 0."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

CENT = Decimal("0.01")


def round_money(value: Decimal | int | None) -> Decimal | None:
    """Half-even to 2 places (SPEC 5: what people read is rounded; totals sum unrounded amounts).
    None stays None (unknown is not zero)."""
    if value is None:
        return None
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_EVEN)


def money(value: Decimal | None, currency: str = "") -> str:
    """`1,234.57` (or `1,234.57 CNY`); an unknown amount is shown as a dash, never as 0."""
    if value is None:
        return "-"
    text = f"{round_money(value):,}"
    return f"{text} {currency}" if currency else text


def shown_change(new: Decimal, old: Decimal) -> Decimal:
    """A change as people read it next to its two amounts: the difference of the amounts shown
    (1.89 -> 1.97 is +0.08 even when the exact change, 0.0850, would round to 0.09)."""
    return round_money(new) - round_money(old)


def small_money(value: Decimal | None, currency: str = "", places: int = 4) -> str:
    """An amount that may be tiny (a unit price, a cost per session): `places` decimals, and
    `< 0.0001` for a positive amount that would read as zero (never `0.0000` for a cost)."""
    if value is None:
        return "-"
    step = Decimal(1).scaleb(-places)
    rounded = Decimal(value).quantize(step, rounding=ROUND_HALF_EVEN)
    if rounded == 0 and value > 0:
        text = f"< {step}"
    elif rounded == 0 and value < 0:
        text = f"> -{step}"
    else:
        text = f"{rounded:,}"
    return f"{text} {currency}" if currency else text


def p_value(value: Decimal | float | None) -> str:
    """A test's p-value: three places, `< 0.001` below that (never `0`: no test proves certainty)."""
    if value is None or value != value:  # NaN: not tested
        return "-"
    exact = Decimal(str(value))
    if exact < Decimal("0.001"):
        return "< 0.001"
    return f"{exact.quantize(Decimal('0.001'), rounding=ROUND_HALF_EVEN)}"


def signed_money(value: Decimal | None, currency: str = "") -> str:
    if value is None:
        return "-"
    rounded = round_money(value)
    sign = "+" if rounded > 0 else ""
    text = f"{sign}{rounded:,}"
    return f"{text} {currency}" if currency else text


def rate(value: Decimal | None, places: int = 4) -> str:
    """A unit cost such as cost per billable minute, where 2 places would hide the change."""
    if value is None:
        return "-"
    return f"{value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN):,}"


def percent(value: Decimal | None, signed: bool = False) -> str:
    """A percentage (already x100) with one decimal, half-even."""
    if value is None:
        return "-"
    rounded = value.quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN)
    sign = "+" if signed and rounded > 0 else ""
    return f"{sign}{rounded}%"


def points(value: Decimal | None, signed: bool = False) -> str:
    """Percentage points (a change of a percentage), one decimal."""
    if value is None:
        return "-"
    rounded = value.quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN)
    sign = "+" if signed and rounded > 0 else ""
    return f"{sign}{rounded} pp"


def round_places(value: Decimal | int | None, places: int = 2) -> Decimal | None:
    """Half-even to `places` decimals; None stays None."""
    if value is None:
        return None
    return Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)


def round_to_total(values: list[Decimal | int | None], places: int = 2) -> list[Decimal | None]:
    """Each value half-even to `places`, then nudged by one unit where needed so that the shown
    values add up to their exact total rounded half-even (the total people read next to them).

    The nudged values are the ones whose rounding moved them furthest from the exact amount (the
    first of equals), so no value moves by more than one unit of the last place. Unknown values
    stay unknown and are not part of the total.
    """
    known = [Decimal(v) for v in values if v is not None]
    if not known:
        return [None for _ in values]
    return round_to(values, round_places(sum(known), places), places)


def round_to(
    values: list[Decimal | int | None], target: Decimal, places: int = 2
) -> list[Decimal | None]:
    """Each value half-even to `places`, the fewest nudged by one unit (largest remainder first)
    so the shown values add up to `target` exactly: the shown parts of a change add up to the
    change shown (now shown minus before shown), per-tenant changes to the headline's. A target
    further than one unit per value from the exact sum is refused."""
    unit = Decimal(1).scaleb(-places)
    exact = [None if v is None else Decimal(v) for v in values]
    shown = [round_places(v, places) for v in exact]
    known = [i for i, v in enumerate(exact) if v is not None]
    units = int((target - sum(shown[i] for i in known)) / unit)
    if abs(units) > len(known):
        raise ValueError(
            f"{target} is not within a unit per value of {sum(shown[i] for i in known)}"
        )
    if units:
        # Rounded down the most first when the rows fall short; rounded up the most when over.
        error = {i: exact[i] - shown[i] for i in known}
        order = sorted(known, key=lambda i: (-error[i] if units > 0 else error[i], i))
        for i in order[: abs(units)]:
            shown[i] += unit if units > 0 else -unit
    return shown
