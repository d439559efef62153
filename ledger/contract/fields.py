"""The contract flattened into field specs, derived from the pydantic models.

The bulk ingest validates millions of rows in DuckDB, not in pydantic; this module turns the models
into the facts that SQL needs (which fields each event type allows and requires, each field's kind and
limits) and into the columns of `raw.events`. Nothing here restates a rule by hand: it is read off the
models, and `tests/ingest/test_contract.py` checks the bulk verdicts against pydantic's on a corpus of edge
cases, so the two paths cannot drift apart.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import cache

import annotated_types
from pydantic import AwareDatetime

from ledger.contract.events import (
    CARD_FIRST_DIGITS,
    CARD_GROUPING_PATTERN,
    CARD_GROUPS_PATTERN,
    CARD_MAX_DIGITS,
    CARD_MIN_DIGITS,
    EMAIL_PATTERN,
    EVENT_TYPES,
    GROUPED_RUN_PATTERN,
    MODEL_BY_EVENT_TYPE,
    PHONE_PATTERN,
    PLAIN_RUN_PATTERN,
    NoPersonalData,
)

# Fields every event carries, checked before the event type is known.
COMMON_FIELDS: tuple[str, ...] = (
    "event_id",
    "source",
    "event_type",
    "occurred_at",
    "tenant_id",
    "session_id",
)

# Quarantine reasons, in the order a row's first broken rule is reported.
QUARANTINE_REASONS: tuple[str, ...] = (
    # A line longer than LEDGER_MAX_LINE_BYTES: quarantined by itself, with its size and first
    # bytes, before anything is read from it; the rest of its file is ingested.
    "line_too_long",
    "malformed_json",
    # A key repeated in one JSON object: readers disagree on its value (issue 26).
    "duplicate_key",
    "missing_field",
    "unknown_field",
    "bad_type",
    # An identifier or short code holding an e-mail address, a phone or a card number (SPEC 3);
    # it wins over `bad_value`, and the quarantine sample is redacted.
    "personal_data",
    "bad_value",
    "future_timestamp",
    # A turn.latency whose segment times lie further from its occurred_at than the clock skew
    # setting allows, or that lasts over MAX_SEGMENT_SECONDS (SPEC 3): one device's clock must not
    # move every tenant's windows.
    "clock_skew",
    "id_conflict",
    # A valid event whose session_id already belongs to another tenant (earlier in the warehouse or
    # in the same batch): a session has one payer, else its charges would be counted twice.
    "session_tenant_conflict",
    # A whole landing file that cannot be read (truncated or fake gzip, not Parquet): one row.
    "unreadable_file",
)

# SPEC 3: the longest a turn.latency segment may last; a longer one is a clock's error, not a turn.
MAX_SEGMENT_SECONDS = 3600

DECIMAL_SCALE = 6
DECIMAL_PRECISION = 18


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: str  # string | enum | integer | decimal | boolean | timestamp
    min_length: int | None = None
    max_length: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    pattern: str | None = None  # unanchored; the whole value must match
    earliest: datetime | None = None  # a timestamp's lower limit (aware), from the model's `ge`
    # None: no personal-data rule; else whether the short-code rule of card digit groups applies.
    personal_data_card_groups: bool | None = None

    @property
    def duckdb_type(self) -> str:
        return {
            "string": "VARCHAR",
            "enum": "VARCHAR",
            "integer": "BIGINT",
            "decimal": f"DECIMAL({DECIMAL_PRECISION},{DECIMAL_SCALE})",
            "boolean": "BOOLEAN",
            "timestamp": "TIMESTAMP",  # naive UTC
        }[self.kind]


def _unwrap_optional(annotation: object) -> object:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _spec_from_field(name: str, annotation: object, metadata: list[object]) -> FieldSpec:
    annotation = _unwrap_optional(annotation)
    # Annotated[...] aliases keep their constraints in __metadata__ (Count, Quantity, Identifier).
    if typing.get_origin(annotation) is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        return _spec_from_field(name, base, [*extra, *metadata])
    limits: dict[str, object] = {}
    pattern: str | None = None
    card_groups: bool | None = None
    for item in metadata:
        if isinstance(item, NoPersonalData):
            card_groups = item.card_groups
        # Field(pattern=...) keeps the anchored pattern in pydantic's general metadata.
        found = getattr(item, "pattern", None)
        if isinstance(found, str):
            pattern = found.removeprefix("^").removesuffix("$")
        for attr, key in (
            ("min_length", "min_length"),
            ("max_length", "max_length"),
            ("ge", "minimum"),
            ("le", "maximum"),
        ):
            value = getattr(item, attr, None)
            if value is not None:
                limits[key] = value
        # FieldInfo-style metadata nests annotated_types constraints in .metadata
        for nested in getattr(item, "metadata", []) or []:
            found = getattr(nested, "pattern", None)
            if isinstance(found, str):
                pattern = found.removeprefix("^").removesuffix("$")
            if isinstance(nested, annotated_types.MinLen):
                limits["min_length"] = nested.min_length
            elif isinstance(nested, annotated_types.MaxLen):
                limits["max_length"] = nested.max_length
            elif isinstance(nested, annotated_types.Ge):
                limits["minimum"] = nested.ge
            elif isinstance(nested, annotated_types.Le):
                limits["maximum"] = nested.le
    if typing.get_origin(annotation) is typing.Literal:
        return FieldSpec(name, "enum", choices=tuple(typing.get_args(annotation)))
    if annotation is bool:
        return FieldSpec(name, "boolean")
    if annotation is int:
        return FieldSpec(name, "integer", **limits)
    if annotation is Decimal:
        return FieldSpec(name, "decimal", minimum=limits.get("minimum"))
    if annotation is str:
        return FieldSpec(
            name, "string", **limits, pattern=pattern, personal_data_card_groups=card_groups
        )
    if annotation is AwareDatetime:
        earliest = limits.get("minimum")
        return FieldSpec(
            name, "timestamp", earliest=earliest if isinstance(earliest, datetime) else None
        )
    raise TypeError(f"contract field {name!r} has a type the ingest cannot map: {annotation!r}")


@dataclass(frozen=True)
class EventTypeSpec:
    event_type: str
    fields: tuple[FieldSpec, ...]  # in model order, event_type excluded
    required: frozenset[str]


@cache
def event_type_specs() -> dict[str, EventTypeSpec]:
    specs: dict[str, EventTypeSpec] = {}
    for event_type in EVENT_TYPES:
        model = MODEL_BY_EVENT_TYPE[event_type]
        fields = []
        required = set()
        for name, info in model.model_fields.items():
            if name == "event_type":
                continue
            fields.append(_spec_from_field(name, info.annotation, list(info.metadata)))
            if info.is_required():
                required.add(name)
        specs[event_type] = EventTypeSpec(event_type, tuple(fields), frozenset(required))
    return specs


@cache
def all_fields() -> dict[str, FieldSpec]:
    """Every field of every event type, once, in first-seen order; kinds must agree across types."""
    seen: dict[str, FieldSpec] = {}
    for spec in event_type_specs().values():
        for field in spec.fields:
            if field.name in seen and seen[field.name].duckdb_type != field.duckdb_type:
                raise TypeError(f"field {field.name!r} has two storage types across event types")
            seen.setdefault(field.name, field)
    return seen


def field_variants(name: str) -> list[tuple[FieldSpec, tuple[str, ...]]]:
    """The distinct specs one field name has across event types, each with the types using it.

    Most fields mean the same everywhere; `kind` is a degradation kind on `session.degraded` and a
    shadow kind on `turn.shadow`: one storage column, two value rules.
    """
    variants: dict[FieldSpec, list[str]] = {}
    for event_type, spec in event_type_specs().items():
        for field in spec.fields:
            if field.name == name:
                variants.setdefault(field, []).append(event_type)
    return [(field, tuple(types)) for field, types in variants.items()]


def allowed_fields(event_type: str) -> tuple[str, ...]:
    return ("event_type", *(field.name for field in event_type_specs()[event_type].fields))


# Lineage columns that `raw.events` adds to the contract's fields.
LINEAGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("payload_hash", "UBIGINT"),
    ("key_hash", "UBIGINT"),
    ("file_id", "BIGINT"),
    ("line_number", "BIGINT"),
    ("ingested_at", "TIMESTAMP"),
)


def raw_event_columns() -> list[tuple[str, str]]:
    """(name, DuckDB type) of `raw.events`: event_type then every contract field, then lineage."""
    columns = [("event_type", "VARCHAR")]
    columns += [(field.name, field.duckdb_type) for field in all_fields().values()]
    return columns + list(LINEAGE_COLUMNS)


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


REDACTED = "[redacted]"


def _card_digits_sql(digits: str) -> str:
    """SQL: the digit string `digits` is a card number (`events.is_card_number`): 15-19 digits,
    a card network's first digit, and Luhn's check (from the right, every second digit doubled,
    less 9 when that exceeds 9; the sum a multiple of 10)."""
    first = " or ".join(f"starts_with({digits}, '{d}')" for d in CARD_FIRST_DIGITS)
    luhn = (
        f"list_sum(list_transform(string_split(reverse({digits}), ''), lambda c, i: "
        "case when i % 2 = 0 then 2 * cast(c as integer) - "
        "case when cast(c as integer) > 4 then 9 else 0 end else cast(c as integer) end))"
    )
    return (
        f"(length({digits}) between {CARD_MIN_DIGITS} and {CARD_MAX_DIGITS} "
        f"and ({first}) and {luhn} % 10 = 0)"
    )


def _card_runs_sql(value: str) -> str:
    """SQL: the list of card numbers written in `value` (`events.card_numbers`).

    Each run of the right shape has its digits taken once (a run with its separators dropped), and
    only those are checked: the check is the costly part, and most runs fail the shape.
    """
    found = [
        "list_transform(list_filter(list_transform(list_filter(list_transform("
        f"regexp_extract_all({value}, {_sql_text(runs)}), "
        "lambda m: regexp_replace(m, '^[^0-9]', '')), "
        f"lambda r: regexp_full_match(r, {_sql_text(shape)})), "
        "lambda r: {'run': r, 'digits': regexp_replace(r, '[^0-9]', '', 'g')}), "
        f"lambda c: {_card_digits_sql('c.digits')}), lambda c: c.run)"
        for runs, shape in (
            (PLAIN_RUN_PATTERN, "[0-9]+"),
            (GROUPED_RUN_PATTERN, CARD_GROUPING_PATTERN),
        )
    ]
    return f"list_concat({', '.join(found)})"


def personal_data_sql(value: str, *, card_groups: bool) -> str:
    """SQL, true when the text `value` holds personal data (`events.has_personal_data`).

    A cheap regular expression that every case needs (an `@`, a `+` and a digit, 15 digits or, for
    a short code, two groups of four) comes first: the usual identifier pays for nothing more.
    """
    needed = r"@|\+[0-9]|[0-9](?:[ -]?[0-9]){14}"
    checks = [
        f"regexp_matches({value}, {_sql_text(EMAIL_PATTERN)})",
        f"regexp_matches({value}, {_sql_text(PHONE_PATTERN)})",
    ]
    if card_groups:
        needed += "|[0-9]{4}[ .-][0-9]{4}"
        checks.append(f"regexp_matches({value}, {_sql_text(CARD_GROUPS_PATTERN)})")
    checks.append(f"len({_card_runs_sql(value)}) > 0")
    return (
        f"case when regexp_matches({value}, {_sql_text(needed)}) "
        f"then ({' or '.join(checks)}) else false end"
    )


def redacted_sql(value: str) -> str:
    """SQL: the text `value` with every e-mail address, phone and card number (and digits grouped
    in fours, joined by a dot or a space, as card fragments are written) replaced by `[redacted]`:
    the quarantine sample of a line.

    Fragments are redacted wherever they are in the line (a decimal such as 1234.5678 too): a
    sample that hides too much is the price of one that never shows a card. Not with a dash: the
    digit groups of UUIDs and dates keep the sample's ids readable."""
    text = value
    for pattern in (EMAIL_PATTERN, PHONE_PATTERN, "[0-9]{4}(?:[ .][0-9]{4})+"):
        text = f"regexp_replace({text}, {_sql_text(pattern)}, {_sql_text(REDACTED)}, 'g')"
    # Card numbers are found in the text as sent, then each is replaced where it is.
    return (
        f"list_reduce({_card_runs_sql(value)}, "
        f"lambda acc, r: replace(acc, r, {_sql_text(REDACTED)}), {text})"
    )
