"""Bulk validation of raw JSON lines in DuckDB, generated from the contract's field specs.

`validation_sql(lines)` turns a relation of `(line_number, raw_text)` into one row per line with the
typed contract columns, a `payload_hash`, and `quarantine_reason`/`quarantine_detail` for the first rule
the line breaks
(NULL when it is valid). Rules are checked in a fixed order, and `ledger.contract.verdict` applies the
same order to pydantic's errors, so both paths name the same reason for the same line:

1. `malformed_json`: not JSON, or not a JSON object;
2. `missing_field`: a common field is absent (null counts as absent);
3. `bad_type` / `bad_value`: `event_type` is not a string / not a known type;
4. `missing_field`: a field the event type requires is absent;
5. `unknown_field`: a non-null key the event type does not have;
6. `bad_type`: a value of the wrong JSON type or textual form;
7. `bad_value`: a value outside its limits (length, enum, >= 0, decimal places, ended_at >= started_at);
8. `future_timestamp`: `occurred_at` more than 5 minutes after the ingest time.
"""

from __future__ import annotations

from ledger.contract.events import DECIMAL_TEXT_PATTERN, EVENT_TYPES, RFC3339_PATTERN
from ledger.contract.fields import (
    COMMON_FIELDS,
    DECIMAL_PRECISION,
    DECIMAL_SCALE,
    FieldSpec,
    all_fields,
    allowed_fields,
    event_type_specs,
)

FUTURE_TOLERANCE = "interval 5 minute"
# Event types whose `cache_hit` defaults to false when absent.
CACHE_HIT_DEFAULT_TYPES = ("tts.usage", "vision.usage")
# Blank lines carry no event. `trim` (Unicode-aware) is costly on long lines, so the usual case, a
# line that starts with "{", skips it.
NOT_BLANK = "case when starts_with(raw_text, '{') then true else trim(raw_text) <> '' end"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _list(values: tuple[str, ...] | list[str]) -> str:
    return "[" + ", ".join(_quote(v) for v in values) + "]"


def _in(values: tuple[str, ...] | list[str]) -> str:
    return "(" + ", ".join(_quote(v) for v in values) + ")"


def _present(name: str) -> str:
    return f"(t_{name} is not null and t_{name} <> 'NULL')"


def _fail(reason: str, detail: str) -> str:
    return f"{_quote(reason + '|' + detail)}"


def _type_ok(field: FieldSpec) -> str:
    name = field.name
    if field.kind in ("string", "enum"):
        return f"t_{name} = 'VARCHAR'"
    if field.kind == "integer":
        return f"t_{name} in ('UBIGINT', 'BIGINT')"
    if field.kind == "boolean":
        return f"t_{name} = 'BOOLEAN'"
    if field.kind == "decimal":
        return (
            f"(t_{name} in ('UBIGINT', 'BIGINT', 'DOUBLE') or (t_{name} = 'VARCHAR' and "
            f"regexp_full_match(s_{name}, {_quote(DECIMAL_TEXT_PATTERN)})))"
        )
    if field.kind == "timestamp":
        return (
            f"(t_{name} = 'VARCHAR' and regexp_full_match(s_{name}, {_quote(RFC3339_PATTERN)}) "
            f"and try_cast(s_{name} as timestamptz) is not null)"
        )
    raise ValueError(field.kind)


def _value_ok(field: FieldSpec) -> str | None:
    name = field.name
    if field.kind == "string":
        return f"length(s_{name}) between {field.min_length or 0} and {field.max_length or 2**31}"
    if field.kind == "enum":
        return f"s_{name} in {_in(field.choices)}"
    if field.kind == "integer":
        low = field.minimum if field.minimum is not None else -(2**63)
        high = field.maximum if field.maximum is not None else 2**63 - 1
        return f"try_cast(s_{name} as hugeint) between {low} and {high}"
    if field.kind == "decimal":
        # Trailing zeros carry no precision ("12.50" has 1 place), so strip them before counting.
        integer_digits = DECIMAL_PRECISION - DECIMAL_SCALE
        plain = f"regexp_replace(s_{name}, '(\\.[0-9]*?)0+$', '\\1')"
        return f"regexp_full_match({plain}, '[0-9]{{1,{integer_digits}}}(\\.[0-9]{{0,{DECIMAL_SCALE}}})?')"
    return None


def _typed(field: FieldSpec) -> str:
    name = field.name
    if field.kind in ("string", "enum"):
        return f"s_{name}"
    if field.kind == "integer":
        return f"try_cast(s_{name} as bigint)"
    if field.kind == "decimal":
        return f"try_cast(s_{name} as {field.duckdb_type})"
    if field.kind == "boolean":
        value = f"(s_{name} = 'true')"
        if name == "cache_hit":
            return (
                f"case when s_event_type in {_in(CACHE_HIT_DEFAULT_TYPES)} "
                f"then coalesce({value}, false) end"
            )
        return value
    if field.kind == "timestamp":
        return f"timezone('UTC', try_cast(s_{name} as timestamptz))"
    raise ValueError(field.kind)


def _checks() -> list[str]:
    """CASE expressions in rule order; the first non-null one is the line's verdict."""
    fields = all_fields()
    specs = event_type_specs()
    checks = ["case when not is_object then 'malformed_json|' end"]
    for name in COMMON_FIELDS:
        checks.append(f"case when not {_present(name)} then {_fail('missing_field', name)} end")
    checks.append(f"case when t_event_type <> 'VARCHAR' then {_fail('bad_type', 'event_type')} end")
    checks.append(
        f"case when s_event_type not in {_in(EVENT_TYPES)} then {_fail('bad_value', 'event_type')} end"
    )
    # Type-specific required fields, in field order.
    for name in fields:
        if name in COMMON_FIELDS:
            continue
        requiring = [t for t, spec in specs.items() if name in spec.required]
        if requiring:
            checks.append(
                f"case when s_event_type in {_in(requiring)} and not {_present(name)} "
                f"then {_fail('missing_field', name)} end"
            )
    checks.append("case when len(unknown_keys) > 0 then 'unknown_field|' || unknown_keys[1] end")
    for field in fields.values():
        if field.name == "event_type":
            continue
        checks.append(
            f"case when {_present(field.name)} and not ({_type_ok(field)}) "
            f"then {_fail('bad_type', field.name)} end"
        )
    for field in fields.values():
        value_ok = _value_ok(field)
        if value_ok is not None:
            checks.append(
                f"case when {_present(field.name)} and not ({value_ok}) "
                f"then {_fail('bad_value', field.name)} end"
            )
    checks.append(
        "case when s_event_type = 'turn.latency' and "
        "try_cast(s_ended_at as timestamptz) < try_cast(s_started_at as timestamptz) "
        f"then {_fail('bad_value', 'ended_at')} end"
    )
    checks.append(
        "case when try_cast(s_occurred_at as timestamptz) > "
        f"cast($ingest_time as timestamptz) + {FUTURE_TOLERANCE} "
        f"then {_fail('future_timestamp', 'occurred_at')} end"
    )
    return checks


def validation_sql(lines: str) -> str:
    """SQL over `lines` (a relation with line_number, raw_text); takes parameter $ingest_time.

    Blank lines are skipped (they carry no event). Each line is parsed in full twice (keys and
    values); every per-field step after that works on the small extracted values.
    """
    fields = all_fields()
    names = ["event_type", *fields]
    paths = _list([f"$.{name}" for name in names])
    extracted = ",\n      ".join(f"values_[{i}] as j_{name}" for i, name in enumerate(names, 1))
    typed_json = ",\n      ".join(
        f"json_type(j_{name}) as t_{name}, json_extract_string(j_{name}, '$') as s_{name}"
        for name in names
    )
    verdict = "coalesce(\n      " + ",\n      ".join(_checks()) + "\n    )"
    typed_columns = ",\n    ".join(f"{_typed(field)} as {field.name}" for field in fields.values())
    hashed = ", ".join(["event_type", *fields])
    allowed_case = " ".join(
        f"when {_quote(t)} then {_list(allowed_fields(t))}" for t in EVENT_TYPES
    )
    return f"""
with source_lines as (
  select line_number, raw_text
  from {lines}
  where raw_text is not null and {NOT_BLANK}
),
parsed as (
  select
    line_number,
    raw_text,
    -- CASE, not AND: json_type raises on malformed text, and AND evaluates both sides
    case when json_valid(raw_text) then json_type(raw_text) = 'OBJECT' else false end as is_object
  from source_lines
),
extracted as (
  select
    line_number,
    raw_text,
    is_object,
    case when is_object then json_keys(raw_text) end as keys,
    case when is_object then json_extract(raw_text, {paths}) end as values_
  from parsed
),
fields as (
  select
    line_number, raw_text, is_object, keys,
      {extracted}
  from extracted
),
scalars as (
  select
    line_number, raw_text, is_object, keys,
      {typed_json}
  from fields
),
with_unknown_keys as (
  select
    *,
    -- keys the event type does not have; a null value counts as absent, like a missing key
    list_filter(
      list_filter(keys, lambda k: not list_contains(case s_event_type {allowed_case} end, k)),
      lambda k: json_type(raw_text, '$."' || replace(k, '"', '\\"') || '"') <> 'NULL'
    ) as unknown_keys
  from scalars
),
judged as (
  select
    *,
    {verdict} as verdict
  from with_unknown_keys
),
typed as (
  select
    line_number,
    raw_text,
    -- not `reason`/`detail`: `reason` is also a contract field (session.degraded)
    split_part(verdict, '|', 1) as quarantine_reason,
    nullif(split_part(verdict, '|', 2), '') as quarantine_detail,
    s_event_type as event_type,
    {typed_columns}
  from judged
)
select
  *,
  case when quarantine_reason is null then hash({hashed}) end as payload_hash
from typed
"""
