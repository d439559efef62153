"""Bulk validation of raw JSON lines in DuckDB, generated from the contract's field specs.

`validation_sql(lines)` turns a relation of `(file_index, line_number, raw_text)` into one row per
line with the typed contract columns, a `payload_hash`, `quarantine_reason` / `quarantine_detail`
for the first rule the line breaks (NULL when it is valid), and the raw text of a line that breaks
one (NULL for a valid line: carrying every valid line's text through the statement and out as
Arrow cost about a sixth of the validation; the commit re-reads the few valid lines an id conflict
quarantines, `ledger.ingest.load`). Rules are checked
in a fixed order, and `ledger.contract.verdict` applies the same order to pydantic's errors, so
both paths name the same reason for the same line:

1. `malformed_json`: not JSON, or not a JSON object;
   `duplicate_key`: a key repeated in the object (`ledger.contract.duplicate_keys`);
2. `missing_field`: a common field is absent (null counts as absent);
3. `bad_type` / `bad_value`: `event_type` is not a string / not a known type;
4. `missing_field`: a field the event type requires is absent;
5. `unknown_field`: a non-null key the event type does not have;
6. `bad_type`: a value of the wrong JSON type or textual form;
   `personal_data`: an identifier or short code holding an e-mail address, a phone or a card
   number (`ledger.contract.events.has_personal_data`);
7. `bad_value`: a value outside its limits (length, enum, >= 0, decimal places, `occurred_at` from
   2000-01-01, ended_at >= started_at);
8. `future_timestamp`: `occurred_at` more than 5 minutes after the ingest time;
9. `clock_skew`: a `turn.latency` whose `started_at` or `ended_at` lies more than the clock skew
   setting (`LEDGER_CLOCK_SKEW_MINUTES`, default 5) from its `occurred_at`, or that lasts over an
   hour (`MAX_SEGMENT_SECONDS`).

Decimals are exact. A decimal is a JSON string or a JSON number, and either way it is judged by
its text as sent: plain digits with an optional fraction (`-?[0-9]+(\\.[0-9]+)?`, else `bad_type`:
an exponent such as `1e2` or `2.5E-3` is `bad_type`, as a number as in a string), then at most 12
integer digits and 6 places, trailing zeros allowed (else `bad_value`); the value stored is that
text. DuckDB's reader makes a JSON number with a fraction or an exponent (or an integer beyond 64
bits) a DOUBLE and gives the double's text (0.10000000000000000000000001 reads as 0.1,
123456789012.123456 as 123456789012.12346), so such a number's text is read off the line instead
(`_number_text`); a 64-bit JSON integer is read exactly.

How it stays fast. Every rule is written once (`_rules`) and used twice:
- per event type, as one conjunction over that type's own fields only (about a dozen of the 46),
  which every valid line of the type passes (`_fast_branch`): the usual line is proven valid
  with dense columns and a few cheap checks;
- as the ladder that names the first broken rule (`_ladder`), evaluated only for the few lines
  no branch proved valid (including the legal corner cases: a null or repeated key).
A line is parsed a fixed number of times in all (validity, key count and event type; then one
`json_type` over the paths for every field's JSON type and one `json_transform` for every value's
text); nothing re-parses a single value, but for a decimal sent as a JSON number that DuckDB reads
as a DOUBLE, whose text one regular expression reads off the line (only such lines pay for it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from ledger.contract.duplicate_keys import repeated_key_sql
from ledger.contract.events import DECIMAL_TEXT_PATTERN, EVENT_TYPES, RFC3339_PATTERN
from ledger.contract.fields import (
    COMMON_FIELDS,
    DECIMAL_PRECISION,
    DECIMAL_SCALE,
    MAX_SEGMENT_SECONDS,
    FieldSpec,
    all_fields,
    allowed_fields,
    event_type_specs,
    field_variants,
    personal_data_sql,
)
from ledger.core.settings import DEFAULT_CLOCK_SKEW_MINUTES
from ledger.core.sql import identifier
from ledger.ingest.files import exact_text_sql

FUTURE_TOLERANCE = "interval 5 minute"
# Event types whose `cache_hit` defaults to false when absent.
CACHE_HIT_DEFAULT_TYPES = ("tts.usage", "vision.usage")
# Blank lines carry no event. `trim` (Unicode-aware) is costly on long lines, so the usual case, a
# line that starts with "{", skips it.
NOT_BLANK = "case when starts_with(raw_text, '{') then true else trim(raw_text) <> '' end"
# JSON's insignificant whitespace (RFC 8259), which may precede the opening brace of an object.
JSON_WHITESPACE = "e' \\t\\n\\r'"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _list(values: tuple[str, ...] | list[str]) -> str:
    return "[" + ", ".join(_quote(v) for v in values) + "]"


def _in(values: tuple[str, ...] | list[str]) -> str:
    return "(" + ", ".join(_quote(v) for v in values) + ")"


def _present(name: str) -> str:
    # A JSON null comes out of json_transform as SQL NULL: it counts as absent.
    return f"t_{name} is not null"


def _type_ok(field: FieldSpec) -> str:
    name = field.name
    if field.kind in ("string", "enum"):
        return f"t_{name} = 'VARCHAR'"
    if field.kind == "integer":
        return f"t_{name} in ('UBIGINT', 'BIGINT')"
    if field.kind == "boolean":
        return f"t_{name} = 'BOOLEAN'"
    if field.kind == "decimal":
        # A 64-bit JSON integer is read exactly; a string, or a JSON number DuckDB reads as a
        # DOUBLE, is judged by its text as sent (`_number_text`): plain digits, no exponent.
        return (
            f"(t_{name} in ('UBIGINT', 'BIGINT') or (t_{name} in ('VARCHAR', 'DOUBLE') and "
            f"regexp_full_match(s_{name}, {_quote(DECIMAL_TEXT_PATTERN)})))"
        )
    if field.kind == "timestamp":
        return (
            f"(t_{name} = 'VARCHAR' and regexp_full_match(s_{name}, {_quote(RFC3339_PATTERN)}) "
            f"and ts_{name} is not null)"
        )
    raise ValueError(field.kind)


def _value_ok(field: FieldSpec) -> str | None:
    name = field.name
    if field.kind == "string":
        length = f"length(s_{name}) between {field.min_length or 0} and {field.max_length or 2**31}"
        if field.pattern is None:
            return length
        return f"{length} and regexp_full_match(s_{name}, {_quote(field.pattern)})"
    if field.kind == "enum":
        return f"s_{name} in {_in(field.choices)}"
    if field.kind == "integer":
        low = field.minimum if field.minimum is not None else -(2**63)
        high = field.maximum if field.maximum is not None else 2**63 - 1
        return f"try_cast(s_{name} as hugeint) between {low} and {high}"
    if field.kind == "decimal":
        # Trailing zeros carry no precision ("12.50" has 1 place): they may follow the places.
        integer_digits = DECIMAL_PRECISION - DECIMAL_SCALE
        return (
            f"regexp_full_match(s_{name}, "
            f"'[0-9]{{1,{integer_digits}}}(\\.[0-9]{{0,{DECIMAL_SCALE}}}0*)?')"
        )
    if field.kind == "timestamp" and field.earliest is not None:
        # The instant, whatever offset it was written with (pydantic's `ge` compares instants).
        return f"ts_{name} >= timestamptz {_quote(field.earliest.isoformat())}"
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
        return f"timezone('UTC', ts_{name})"
    raise ValueError(field.kind)


@dataclass(frozen=True)
class Rule:
    """One contract rule and the verdict `reason|detail` of a line that breaks it."""

    reason: str
    detail: str
    # SQL, true when a line breaks the rule; None for a rule only the ladder can decide.
    breaks: str | None
    # The event types whose valid lines the rule concerns; empty: every line. A valid line of type
    # T passes every rule for T; rules for fields T does not have are left to the key count.
    event_types: tuple[str, ...] = ()
    # SQL naming the detail where it depends on the line (the repeated key); the ladder only:
    # the fast branch's key count already fails a line with a repeated key.
    detail_sql: str | None = None

    def verdict(self) -> str:
        if self.breaks is None:  # the unknown-field rule names the first unknown key
            return f"'unknown_field|' || ({UNKNOWN_KEYS})[1]"
        if self.detail_sql is not None:
            return (
                f"case when {self.breaks} then {_quote(self.reason + '|')} || {self.detail_sql} end"
            )
        return f"case when {self.breaks} then {_quote(self.reason + '|' + self.detail)} end"

    def holds(self) -> str:
        # NULL counts as not broken, as in the ladder's CASE.
        return f"not coalesce({self.breaks}, false)"


# Non-null keys the event type does not have. Only evaluated inside the ladder, for lines that
# already failed the fast check: it lists the keys and looks each unexpected one up again.
_ALLOWED_BY_TYPE = " ".join(
    f"when {_quote(t)} then {_list(allowed_fields(t))}" for t in EVENT_TYPES
)
UNKNOWN_KEYS = (
    "list_filter("
    f"list_filter(keys, lambda k: not list_contains(case s_event_type {_ALLOWED_BY_TYPE} end, k)), "
    "lambda k: json_type(json_text, '$.\"' || replace(k, '\"', '\\\"') || '\"') <> 'NULL')"
)


def _clock_rules(clock_skew_minutes: int) -> list[Rule]:
    """SPEC 3 clock sanity of a turn.latency: its segment times near its occurred_at, and a
    duration of at most an hour. Compared as epoch microseconds, which hold years 0001 to 9999;
    an interval between such instants would overflow."""
    skew_us = clock_skew_minutes * 60 * 1_000_000
    rules = [
        Rule(
            "clock_skew",
            name,
            f"abs(epoch_us(ts_{name}) - epoch_us(ts_occurred_at)) > {skew_us}",
            ("turn.latency",),
        )
        for name in ("started_at", "ended_at")
    ]
    too_long = (
        f"epoch_us(ts_ended_at) - epoch_us(ts_started_at) > {MAX_SEGMENT_SECONDS * 1_000_000}"
    )
    return [*rules, Rule("clock_skew", "ended_at", too_long, ("turn.latency",))]


def _rules(clock_skew_minutes: int = DEFAULT_CLOCK_SKEW_MINUTES) -> list[Rule]:
    """Every rule, in the order a line's first broken rule is reported."""
    fields = all_fields()
    specs = event_type_specs()
    owners = {name: tuple(t for t in EVENT_TYPES if name in allowed_fields(t)) for name in fields}
    rules = [Rule("malformed_json", "", "not is_object")]
    # A key repeated in the object (at its top level) is read differently by different readers:
    # refused before any value is read (`ledger.contract.duplicate_keys`, the collector's rule too).
    repeated = repeated_key_sql("keys")
    rules.append(Rule("duplicate_key", "", f"{repeated} is not null", detail_sql=repeated))
    rules += [Rule("missing_field", name, f"not {_present(name)}") for name in COMMON_FIELDS]
    rules.append(Rule("bad_type", "event_type", "t_event_type <> 'VARCHAR'"))
    rules.append(Rule("bad_value", "event_type", f"s_event_type not in {_in(EVENT_TYPES)}"))
    for name in fields:
        requiring = tuple(t for t, spec in specs.items() if name in spec.required)
        if name not in COMMON_FIELDS and requiring:
            breaks = f"s_event_type in {_in(requiring)} and not {_present(name)}"
            rules.append(Rule("missing_field", name, breaks, requiring))
    rules.append(Rule("unknown_field", "", None))
    for field in fields.values():
        if field.name != "event_type":
            breaks = f"{_present(field.name)} and not ({_type_ok(field)})"
            rules.append(Rule("bad_type", field.name, breaks, owners[field.name]))
    # Personal data (SPEC 3) after the type and before the value's other limits: a card number in a
    # short code is `personal_data`, not a code with too many digits.
    for name in fields:
        variants = field_variants(name)
        for field, types in variants:
            if field.personal_data_card_groups is None:
                continue
            found = personal_data_sql(f"s_{name}", card_groups=field.personal_data_card_groups)
            breaks = f"{_present(name)} and ({found})"
            if len(variants) > 1:
                breaks = f"s_event_type in {_in(types)} and {breaks}"
            rules.append(Rule("personal_data", name, breaks, types))
    for name in fields:
        variants = field_variants(name)
        for field, types in variants:
            value_ok = _value_ok(field)
            if value_ok is None:
                continue
            breaks = f"{_present(name)} and not ({value_ok})"
            if len(variants) > 1:  # the same column, a different rule per event type
                breaks = f"s_event_type in {_in(types)} and {breaks}"
            rules.append(Rule("bad_value", name, breaks, types))
    rules.append(Rule("bad_value", "ended_at", "ts_ended_at < ts_started_at", ("turn.latency",)))
    future = f"ts_occurred_at > cast($ingest_time as timestamptz) + {FUTURE_TOLERANCE}"
    rules.append(Rule("future_timestamp", "occurred_at", future))
    return rules + _clock_rules(clock_skew_minutes)


def _ladder(rules: list[Rule]) -> str:
    """The verdict of the first rule a line breaks, NULL when it breaks none."""
    return "coalesce(\n      " + ",\n      ".join(rule.verdict() for rule in rules) + "\n    )"


# JSON's whitespace as a regular expression class.
_JSON_SPACE = "[ \\t\\n\\r]*"


def _number_text(name: str) -> str:
    """SQL: the text of the JSON number under top-level key `name`, as the line spells it.

    DuckDB reads a JSON number with a fraction or an exponent as a DOUBLE and renders the double,
    not what was sent, so this reads the number off the line itself: the first `"name": number`
    that opens a member (after `{` or `,`), as DuckDB's reader takes the first of repeated keys.
    The key may be spelt with `\\uXXXX` escapes. Inside a string a quote is escaped, so the quoted
    key found is a key, and a string value cannot fool it. A nested object's key can match, but
    no field takes an object, so such a line is quarantined whatever is read here. No match gives
    '', which no rule accepts: a number that cannot be read exactly is refused.
    """
    if not re.fullmatch("[A-Za-z0-9_]+", name):  # no character JSON escapes in short form
        raise ValueError(name)
    key = "".join(f"(?:{char}|\\\\u(?i:{ord(char):04x}))" for char in name)
    pattern = f'[{{,]{_JSON_SPACE}"{key}"{_JSON_SPACE}:{_JSON_SPACE}(-?[0-9][0-9.eE+-]*)'
    return f"regexp_extract(json_text, {_quote(pattern)}, 1)"


def _text(field: FieldSpec | None, name: str, index: int) -> str:
    """SQL: s_ of the field `name`, whose JSON type is types[index] and text from json_transform."""
    if field is not None and field.kind == "decimal":
        # Only a line with such a number pays for reading the line's text (CASE evaluates a branch
        # for the rows that take it); the simulator and collectors send decimals as strings.
        # A JSON integer reads exactly, but for its sign: -0 reads as 0, so a zero is read off the
        # line too (negative zero is `bad_value` in either spelling, SPEC 3).
        number = f"types[{index}] = 'DOUBLE' or (types[{index}] = 'BIGINT' and o.{name} = '0')"
        return f"case when {number} then {_number_text(name)} else o.{name} end"
    return f"o.{name}"


def _extract(names: list[str], source: str) -> str:
    """`source` with, per named field, t_ (its JSON type), s_ (its text) and, for timestamps, ts_.

    `source` has a column json_text: the text the JSON functions read (the line when it is an
    object, else NULL). Each line is parsed twice: `json_type` over the fields' paths gives every
    type at once (json_type's names; a JSON null counts as absent), and `json_transform` to VARCHAR
    gives every value's text (a string unescaped, anything else as written). A decimal sent as a
    JSON number with a fraction or an exponent is the exception: its text is read off the line
    (`_number_text`), since json_transform gives the double's text, not the number sent.
    """
    fields = all_fields()
    paths = _list([f"$.{name}" for name in names])
    structure = _quote(json.dumps(dict.fromkeys(names, "VARCHAR")))
    values = ",\n        ".join(
        f"nullif(types[{index}], 'NULL') as t_{name}, {_text(fields.get(name), name, index)} as s_{name}"
        for index, name in enumerate(names, 1)
    )
    instants = "".join(
        f",\n      try_cast(s_{name} as timestamptz) as ts_{name}"
        for name in names
        if name in fields and fields[name].kind == "timestamp"
    )
    return f"""(
    select *{instants}
    from (
      select * exclude (types, o),
        {values}
      from (
        select *,
          json_type(json_text, {paths}) as types,
          json_transform(json_text, {structure}) as o
        from {source}
      )
    )
  )"""


@dataclass(frozen=True)
class TypedRows:
    """Landing files whose rows arrive typed (Parquet files of one schema): validated on their
    columns, not on text.

    Its rows are the lines of the JSON text they stand for (`text_sql`, `ledger.ingest.files`);
    a row whose columns say what that text's fields would say is judged on the columns directly
    (`_typed_fields`), every other row is rendered to its text for the ladder. Rendering every row
    and parsing it back cost a Parquet file about 26 times the time of its typed read, and a row
    rendered with a key for each column (nulls included) never passed the fast branch's key count.
    """

    relation: str  # the rows, with `file_index` and `line_number`
    columns: dict[str, str]  # each column's DuckDB type (but the two above)
    text_sql: str  # SQL: a row as its JSON text


_INTEGER_TYPES = frozenset(
    {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"}
)


def _column_as_json(name: str, kind: str) -> tuple[str, str] | None:
    """(the JSON type, SQL of the text) a field read from the rendered row would have, for a
    column of DuckDB type `kind`; None for a type read only through its text."""
    ident = identifier(name)
    if kind == "VARCHAR":
        return "VARCHAR", ident
    if kind in _INTEGER_TYPES:
        return "BIGINT", f"cast({ident} as varchar)"
    if kind == "BOOLEAN":
        return "BOOLEAN", f"case when {ident} then 'true' when not {ident} then 'false' end"
    # An instant or a decimal is rendered as a string (`files.exact_text_sql`).
    text = exact_text_sql(name, kind)
    return ("VARCHAR", text) if text is not None else None


def _typed_fields(event_type: str, rows: TypedRows) -> str | None:
    """`rows` of `event_type` whose columns can be judged directly, with `_extract`'s columns.

    A row qualifies when every column its type does not take (another type's field, an unknown
    column) is null, and so is every column of a type read only through its text: such a row's
    text has exactly these fields with these JSON types and texts (a null counts as absent, as in
    the text). None when the file cannot say a row's type (no text `event_type` column).
    """
    if rows.columns.get("event_type") != "VARCHAR":
        return None
    fields = all_fields()
    names = set(allowed_fields(event_type))
    values, empty = [], []
    for column, kind in rows.columns.items():
        ident = identifier(column)
        read = _column_as_json(column, kind) if column in names else None
        if column == "event_type":
            continue
        if read is None:
            empty.append(f"{ident} is null")
            continue
        json_type, text = read
        values.append(f"{text} as s_{column}")
        values.append(f"case when {ident} is not null then '{json_type}' end as t_{column}")
        if fields[column].kind == "timestamp":
            values.append(f"try_cast({text} as timestamptz) as ts_{column}")
    present = " + ".join(
        [
            "1",
            *(
                f"({identifier(c)} is not null)::int"
                for c in rows.columns
                if c in names and c != "event_type"
            ),
        ]
    )
    where = " and ".join([f"event_type = {_quote(event_type)}", *empty])
    return f"""(
    select file_index, line_number, true as is_object, {present} as key_count,
      'VARCHAR' as t_event_type, event_type as s_event_type{"".join(", " + v for v in values)}
    from {rows.relation}
    where {where}
  )"""


def _read_once(typed: tuple[TypedRows, ...]) -> tuple[str, tuple[TypedRows, ...]]:
    """CTEs that read each group of typed files once, and the groups reading from them: every
    event type's branch and the ladder read the rows, and a Parquet scan decodes every column it
    projects for every row, whatever filter follows."""
    ctes = "".join(
        f"typed_rows_{index} as materialized (select * from {rows.relation}),\n"
        for index, rows in enumerate(typed, 1)
    )
    return ctes, tuple(
        replace(rows, relation=f"typed_rows_{index}") for index, rows in enumerate(typed, 1)
    )


def _fast_branch(event_type: str, rules: list[Rule], typed: tuple[TypedRows, ...] = ()) -> str:
    """The lines of one event type, typed, with `passes`: true when the line breaks no rule.

    Only the type's own fields are extracted, so every expression works on dense columns. The key
    count stands in for the unknown-field rule: a line whose keys are exactly the non-null fields
    its type allows has no unknown, null-valued or repeated key. A line that does not pass is not
    necessarily invalid (a null is allowed): the ladder decides.
    """
    fields = all_fields()
    names = list(allowed_fields(event_type))
    present = " + ".join(f"({_present(name)})::int" for name in names)
    holds = [f"key_count = {present}"] + [
        rule.holds()
        for rule in rules
        if rule.breaks is not None
        and rule.detail_sql is None
        and (not rule.event_types or event_type in rule.event_types)
    ]
    columns = ",\n    ".join(
        f"{_typed(fields[name])} as {name}" for name in names if name != "event_type"
    )
    source = f"(select *, raw_text as json_text from split where event_type = {_quote(event_type)})"
    lines = _extract(names, source)
    extracted = [found for rows in typed if (found := _typed_fields(event_type, rows))]
    if extracted:
        lines = (
            "("
            + "\n  union all by name ".join(
                [f"select * from {lines}", *(f"select * from {found}" for found in extracted)]
            )
            + ")"
        )
    return f"""(
  select
    file_index,
    line_number,
    {" and ".join(holds)} as passes,
    s_event_type as event_type,
    {columns}
  from {lines}
)"""


def _branches(fast: bool) -> dict[str, str]:
    """The CTE name of each event type's fast branch (none when the ladder does everything)."""
    return {t: f"fast_{index}" for index, t in enumerate(EVENT_TYPES if fast else (), 1)}


def _common_ctes(
    lines: str,
    branches: dict[str, str],
    rules: list[Rule],
    typed: tuple[TypedRows, ...] = (),
    read_once: str = "",
) -> str:
    """The CTEs every query here starts with: the typed rows read once (`_read_once`), the lines,
    their split, the fast branches."""
    fast_ctes = "".join(
        f",\n{cte} as materialized {_fast_branch(event_type, rules, typed)}"
        for event_type, cte in branches.items()
    )
    return f"""
with {read_once}source_lines as (
  select file_index, line_number, raw_text
  from {lines}
  where raw_text is not null and {NOT_BLANK}
),
split as materialized (
  select
    file_index,
    line_number,
    raw_text,
    is_object,
    case when is_object then len(json_keys(raw_text)) end as key_count,
    case when is_object then json_extract_string(raw_text, '$.event_type') end as event_type
  from (
    select
      file_index,
      line_number,
      raw_text,
      -- valid JSON whose first significant character opens an object; OR evaluates the costly
      -- right side only for a line that does not start with the brace
      json_valid(raw_text) and (starts_with(raw_text, '{{')
        or starts_with(ltrim(raw_text, {JSON_WHITESPACE}), '{{')) as is_object
    from source_lines
  )
){fast_ctes}"""


def _proven(branches: dict[str, str]) -> str:
    return " union all ".join(
        f"select file_index, line_number from {cte} where passes" for cte in branches.values()
    )


def proven_sql(
    lines: str,
    typed: tuple[TypedRows, ...] = (),
    *,
    clock_skew_minutes: int = DEFAULT_CLOCK_SKEW_MINUTES,
) -> str:
    """The lines of `lines` (and rows of `typed`) that their event type's fast branch proved
    valid (file, line)."""
    branches = _branches(fast=True)
    read_once, typed = _read_once(typed)
    rules = _rules(clock_skew_minutes)
    return _common_ctes(lines, branches, rules, typed, read_once) + "\n" + _proven(branches)


def validation_sql(
    lines: str,
    *,
    fast: bool = True,
    typed: tuple[TypedRows, ...] = (),
    clock_skew_minutes: int = DEFAULT_CLOCK_SKEW_MINUTES,
) -> str:
    """SQL over `lines` (file_index, line_number, raw_text) and the files whose rows arrive
    `typed`; takes parameter $ingest_time.

    One statement validates several files (planning it costs about as much as validating a small
    file); a line is identified by (file_index, line_number). Blank lines are skipped (they carry
    no event). Each line that breaks a rule keeps its raw text (for the quarantine). `fast=False`
    sends every line through the ladder: the same result, slowly (the tests compare the two).
    `clock_skew_minutes` is the settings' (an int, written into the SQL).
    """
    fields = all_fields()
    names = ["event_type", *fields]
    rules = _rules(clock_skew_minutes)
    branches = _branches(fast)
    accepted = "".join(
        "select file_index, line_number, null::varchar as quarantine_reason, "
        "null::varchar as quarantine_detail, event_type, "
        + ", ".join(
            name if name in allowed_fields(event_type) else f"null::{field.duckdb_type} as {name}"
            for name, field in fields.items()
        )
        + f", null::varchar as raw_text from {cte} where passes\n  union all\n  "
        for event_type, cte in branches.items()
    )
    not_proven = (
        f"anti join ({_proven(branches)}) using (file_index, line_number)" if branches else ""
    )
    typed_columns = ",\n    ".join(f"{_typed(field)} as {field.name}" for field in fields.values())
    # The ladder sees every line no branch proved valid. A line that is not a JSON object has no
    # types or values (json_type and json_transform would raise on it): NULL text.
    rejected = f"""(
      select file_index, line_number, is_object, raw_text,
        case when is_object then raw_text end as json_text,
        case when is_object then json_keys(raw_text) end as keys
      from split
      {not_proven}
    )"""
    # Typed rows no branch proved, as their text: only these rows are rendered.
    read_once, typed = _read_once(typed)
    for rows in typed:
        rendered = (
            f"anti join ({_proven(branches)}) using (file_index, line_number)" if branches else ""
        )
        rejected += f"""
    union all
    select file_index, line_number, is_object, raw_text,
      case when is_object then raw_text end as json_text,
      case when is_object then json_keys(raw_text) end as keys
    from (
      select file_index, line_number, raw_text,
        json_valid(raw_text) and starts_with(raw_text, '{{') as is_object
      from (
        select file_index, line_number, {rows.text_sql} as raw_text
        from {rows.relation} {rendered}
      )
    )"""
    rejected = f"({rejected})" if typed else rejected
    return (
        _common_ctes(lines, branches, rules, typed, read_once)
        + f""",
general as (
  select
    file_index,
    line_number,
    {_ladder(rules)} as verdict,
    s_event_type as event_type,
    {typed_columns},
    raw_text
  from {_extract(names, rejected)}
),
judged as (
  {accepted}select
    file_index,
    line_number,
    -- not `reason`/`detail`: `reason` is also a contract field (session.degraded)
    split_part(verdict, '|', 1) as quarantine_reason,
    nullif(split_part(verdict, '|', 2), '') as quarantine_detail,
    event_type, {", ".join(fields)}, raw_text
  from general
)
select
  file_index, line_number, quarantine_reason, quarantine_detail, event_type, {", ".join(fields)},
  case when quarantine_reason is null then hash({", ".join(names)}) end as payload_hash,
  case when quarantine_reason is not null then raw_text end as raw_text
from judged
"""
    )
