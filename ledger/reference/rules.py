"""The rules every reference value must follow (SPEC section 4), as pydantic annotated types.

Each rule is a pydantic validator raising `PydanticCustomError(rule, message)`: the error's type is
the rule's name (`negative_price`, `unknown_meter`, ...) and its message says what to do, so the
loader can turn a `ValidationError` into problems that name file, line and rule.

Money is `Decimal` from the CSV text on, never float. Values must fit the warehouse's
DECIMAL(38, 12): at most 26 integer digits and 12 decimal places (more would be rounded silently by
the warehouse, so it is refused here instead).

Exact unit prices: DuckDB's DECIMAL / DECIMAL returns DOUBLE, so the warehouse never divides money
in SQL; it only multiplies quantities by unit prices derived here, once: the exact quotient of the
two Decimals (taken as a fraction, so there is exactly one rounding, never a double rounding),
quantized to 20 decimal places with ROUND_HALF_EVEN:

- rate card:   `unit_price = price / per`   (0.0077 per 60 -> 0.00012833333333333333)
- price plans: `price_per_second = price_per_minute / 60`

The rounding error is below 5e-21 per unit (below 1e-11 even over 10^9 tokens), far inside the
10 decimal places the ledger keeps. Both land in DECIMAL(38, 20) columns.

Instants (`effective_from`, `effective_to`) are naive datetimes in UTC: a bare `YYYY-MM-DD` means
00:00 UTC that day; an RFC 3339 timestamp with an offset is converted to UTC. `effective_from` is
inclusive, `effective_to` exclusive, and an empty `effective_to` means open-ended.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Context, Decimal, InvalidOperation, localcontext
from fractions import Fraction
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ValidationInfo,
)
from pydantic_core import PydanticCustomError

from ledger.contract.events import SEGMENTS, Scenario
from ledger.core.vocabulary import METERS

CONTRACT_SCENARIOS: tuple[str, ...] = Scenario.__args__  # type: ignore[attr-defined]
# Sessions seen without `session.started` get scenario `unknown`; their budgets follow `other`
# unless the YAML maps `unknown` explicitly.
UNKNOWN_SCENARIO = "unknown"
UNKNOWN_SCENARIO_FALLBACK = "other"
BUDGET_SCENARIOS: tuple[str, ...] = (*CONTRACT_SCENARIOS, UNKNOWN_SCENARIO)
FIRST_AUDIO = "first_audio"
# SPEC 13: a profile's SLO objective when the budgets file names none.
DEFAULT_OBJECTIVE = Decimal("0.95")

MONEY_SCALE = 12  # DECIMAL(38, 12)
MONEY_MAX_INTEGER_DIGITS = 38 - MONEY_SCALE
UNIT_PRICE_SCALE = 20  # DECIMAL(38, 20)
UNIT_PRICE_MAX_INTEGER_DIGITS = 38 - UNIT_PRICE_SCALE
MAX_INTEGER = 2**31 - 1  # DuckDB INTEGER

_EXACT = Context(prec=60)
_MONEY_QUANTUM = Decimal(1).scaleb(-MONEY_SCALE)

_CURRENCY = re.compile(r"[A-Z]{3}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,6})?(?P<offset>[Zz]|[+-]\d{2}:\d{2})?"
)
_WHOLE_NUMBER = re.compile(r"\+?\d+")
# A name as events carry it (SPEC 3 identifiers): printable ASCII without spaces.
_NAME = re.compile(r"[!-~]{1,128}")


# The rules a single value or row can break; the error's type is the rule's name.
VALUE_RULES: frozenset[str] = frozenset(
    {
        "missing_value",
        "bad_value",
        "bad_number",
        "out_of_range",
        "too_precise",
        "negative_price",
        "per_not_positive",
        "rate_not_positive",
        "bad_currency",
        "unknown_meter",
        "bad_date",
        "bad_increment",
        "empty_window",
        "budget_not_positive",
        "unknown_segment",
        "unknown_scenario",
        "missing_owner",
        "bad_name",
        "bad_objective",
        "bad_month",
    }
)


def _rule(rule: str, message: str, **context: Any) -> PydanticCustomError:
    assert rule in VALUE_RULES, rule
    return PydanticCustomError(rule, message, context or None)


# ---- exact arithmetic ----------------------------------------------------------------------------


def exact_ratio(numerator: Decimal, denominator: Decimal) -> Decimal:
    """`numerator / denominator` quantized to 20 places, ROUND_HALF_EVEN, rounded once."""
    # round() of a Fraction rounds half to even, on the exact value.
    scaled = round(Fraction(numerator) / Fraction(denominator) * 10**UNIT_PRICE_SCALE)
    return Decimal(f"{scaled}E-{UNIT_PRICE_SCALE}")  # the string constructor never rounds


def to_money_scale(value: Decimal) -> Decimal:
    """`value` at exactly 12 places, for DECIMAL(38, 12); validation guarantees nothing is lost."""
    with localcontext(_EXACT):
        return value.quantize(_MONEY_QUANTUM)


def show_instant(value: datetime | None) -> str:
    if value is None:
        return "open"
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}"
    return f"{text} UTC"


def as_csv_instant(value: datetime) -> str:
    """How to write `value` (naive UTC) in a reference CSV: a bare date when it is midnight."""
    if value.time() == datetime.min.time():
        return value.strftime("%Y-%m-%d")
    return value.isoformat() + "Z"


def parse_instant(text: str) -> datetime:
    """`YYYY-MM-DD` (00:00 UTC) or RFC 3339 with offset -> naive UTC; ValueError otherwise."""
    if _DATE.fullmatch(text):
        return datetime.strptime(text, "%Y-%m-%d")
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        raise ValueError("not a date")
    if match.group("offset") is None:
        raise ValueError("no offset")
    parsed = datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    return parsed.astimezone(UTC).replace(tzinfo=None)


# ---- field rules -------------------------------------------------------------------------------


def _required_text(value: object, info: ValidationInfo) -> str:
    if isinstance(value, str):
        value = value.strip()
    if value is None or value == "":
        raise _rule(
            "missing_value",
            "{column} is empty; every row needs a {column}",
            column=info.field_name,
        )
    if not isinstance(value, str):
        raise _rule("bad_value", "{column} must be text", column=info.field_name)
    return value


def _name(value: str, info: ValidationInfo) -> str:
    if not _NAME.fullmatch(value):
        raise _rule(
            "bad_name",
            "{column} '{value}' is not a name events can carry: 1 to 128 printable ASCII "
            "characters without spaces (a host such as api.openai.com, not a URL with spaces)",
            column=info.field_name,
            value=value,
        )
    return value


def _decimal(value: object, info: ValidationInfo) -> Decimal:
    column = info.field_name
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            raise _rule(
                "missing_value",
                "{column} is empty; enter a number such as 0.0144 (0 if there is no charge)",
                column=column,
            )
        try:
            number = Decimal(text)
        except InvalidOperation:
            number = Decimal("NaN")
        shown = text
    elif isinstance(value, Decimal):
        number, shown = value, str(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number, shown = Decimal(value), str(value)
    else:
        # Floats are refused: most prices (0.1, 0.0144) have no exact float.
        number, shown = Decimal("NaN"), repr(value)
    if not number.is_finite():
        raise _rule(
            "bad_number",
            "{column} is not a number: '{value}'; write a plain decimal such as 0.0144 "
            "(no currency symbol, no thousands separator)",
            column=column,
            value=shown,
        )
    if number.adjusted() >= MONEY_MAX_INTEGER_DIGITS:
        raise _rule(
            "out_of_range",
            "{column} '{value}' has more than {digits} digits before the decimal point; "
            "check the amount",
            column=column,
            value=shown,
            digits=MONEY_MAX_INTEGER_DIGITS,
        )
    if to_money_scale(number) != number:
        raise _rule(
            "too_precise",
            "{column} '{value}' has more than {scale} decimal places, which the ledger cannot "
            "store exactly; round it, or raise `per` (e.g. price per 1000000 instead of per 1)",
            column=column,
            value=shown,
            scale=MONEY_SCALE,
        )
    return number


def _not_negative(value: Decimal, info: ValidationInfo) -> Decimal:
    if value < 0:
        raise _rule(
            "negative_price",
            "{column} must not be negative, got {value}; enter the list amount (0 if free)",
            column=info.field_name,
            value=str(value),
        )
    return value


def _positive_per(value: Decimal) -> Decimal:
    if value <= 0:
        raise _rule(
            "per_not_positive",
            "per must be greater than 0, got {value}; it is how many units the price is for "
            "(1, 60, 1000, 10000 or 1000000)",
            value=str(value),
        )
    return value


def _positive_rate(value: Decimal) -> Decimal:
    if value <= 0:
        raise _rule(
            "rate_not_positive",
            "rate must be greater than 0, got {value}; it is how many units of the reporting "
            "currency 1 unit of this currency buys",
            value=str(value),
        )
    return value


def _currency(value: object) -> str:
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not _CURRENCY.fullmatch(text):
        raise _rule(
            "bad_currency",
            "currency must be a 3-letter upper-case ISO 4217 code such as CNY or USD, got "
            "'{value}'",
            value=str(value),
        )
    return text


def _meter(value: object) -> str:
    text = value.strip() if isinstance(value, str) else value
    if text not in METERS:
        raise _rule(
            "unknown_meter",
            "meter '{value}' is not a known meter; use one of: {allowed}",
            value=str(value),
            allowed=", ".join(METERS),
        )
    return str(text)


def _instant(value: object, info: ValidationInfo) -> datetime | None:
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value
    if value is None or (isinstance(value, str) and not value.strip()):
        if info.field_name == "effective_to":
            return None  # open-ended
        raise _rule(
            "missing_value",
            "{column} is empty; enter the first day the row applies, as YYYY-MM-DD",
            column=info.field_name,
        )
    try:
        return parse_instant(value.strip() if isinstance(value, str) else "")
    except ValueError:
        raise _rule(
            "bad_date",
            "{column} is not a date: '{value}'; write YYYY-MM-DD (meaning 00:00 UTC) or an RFC "
            "3339 timestamp with offset such as 2026-11-16T00:00:00+08:00",
            column=info.field_name,
            value=str(value),
        ) from None


def _calendar_date(value: object) -> date:
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    text = value.strip() if isinstance(value, str) else ""
    try:
        if not _DATE.fullmatch(text):
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise _rule(
            "bad_date",
            "date is not a calendar date: '{value}'; write YYYY-MM-DD",
            value=str(value),
        ) from None


def _increment(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        number: int | None = value
    elif isinstance(value, str) and _WHOLE_NUMBER.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        number = None
    if number is None or not 0 < number <= MAX_INTEGER:
        raise _rule(
            "bad_increment",
            "billing_increment_seconds must be a whole number of seconds greater than 0 "
            "(such as 1, 6 or 60), got '{value}'",
            value=str(value),
        )
    return number


def _budget_ms(value: object, info: ValidationInfo) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _rule(
            "bad_value",
            "{key} must be a whole number of milliseconds such as 250, got '{value}'",
            key=info.field_name,
            value=str(value),
        )
    if not 0 < value <= MAX_INTEGER:
        raise _rule(
            "budget_not_positive",
            "{key} must be greater than 0 ms, got {value}; a budget is the time the step may take",
            key=info.field_name,
            value=str(value),
        )
    return value


def _objective(value: object, info: ValidationInfo) -> Decimal:
    # An SLO objective (SPEC 13): the share of turns that must be within budget. 1 would leave no
    # error budget at all (every burn rate infinite), 0 would promise nothing.
    number = None
    if isinstance(value, Decimal | int) and not isinstance(value, bool):
        number = Decimal(value)
    elif isinstance(value, float | str):
        try:
            number = Decimal(str(value).strip())
        except InvalidOperation:
            number = None
    if number is None or not number.is_finite() or not 0 < number < 1:
        raise _rule(
            "bad_objective",
            "{key} must be a share strictly between 0 and 1 such as 0.95 (95% of turns within "
            "budget), got '{value}'",
            key=info.field_name,
            value=str(value),
        )
    if number != number.quantize(Decimal("0.0001")):
        raise _rule(
            "bad_objective",
            "{key} '{value}' has more than 4 decimal places; write it as 0.9995 at most",
            key=info.field_name,
            value=str(value),
        )
    return number


def _month(value: object) -> date:
    text = value.strip() if isinstance(value, str) else ""
    try:
        if not re.fullmatch(r"\d{4}-\d{2}", text):
            raise ValueError(text)
        return date.fromisoformat(f"{text}-01")
    except ValueError:
        raise _rule(
            "bad_month",
            "month is not a calendar month: '{value}'; write YYYY-MM such as 2026-11",
            value=str(value),
        ) from None


def _segment(value: str) -> str:
    if value not in SEGMENTS:
        raise _rule(
            "unknown_segment",
            "segment '{value}' is not a contract segment; use one of: {allowed}",
            value=value,
            allowed=", ".join(SEGMENTS),
        )
    return value


def _scenario(value: str) -> str:
    if value not in BUDGET_SCENARIOS:
        raise _rule(
            "unknown_scenario",
            "scenario '{value}' is not a contract scenario; use one of: {allowed}",
            value=value,
            allowed=", ".join(BUDGET_SCENARIOS),
        )
    return value


Text = Annotated[str, BeforeValidator(_required_text)]
Name = Annotated[Text, AfterValidator(_name)]
Money = Annotated[Decimal, BeforeValidator(_decimal)]
Amount = Annotated[Money, AfterValidator(_not_negative)]
Per = Annotated[Money, AfterValidator(_positive_per)]
Rate = Annotated[Money, AfterValidator(_positive_rate)]
Currency = Annotated[str, BeforeValidator(_currency)]
Meter = Annotated[str, BeforeValidator(_meter)]
Instant = Annotated[datetime, BeforeValidator(_instant)]
OpenInstant = Annotated[datetime | None, BeforeValidator(_instant)]
CalendarDate = Annotated[date, BeforeValidator(_calendar_date)]
Increment = Annotated[int, BeforeValidator(_increment)]
BudgetMs = Annotated[int, BeforeValidator(_budget_ms)]
Objective = Annotated[Decimal, BeforeValidator(_objective)]
Month = Annotated[date, BeforeValidator(_month)]
SegmentName = Annotated[str, AfterValidator(_segment)]
ScenarioName = Annotated[str, AfterValidator(_scenario)]
