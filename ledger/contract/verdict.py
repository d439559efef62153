"""The contract's verdict on one raw line, by pydantic: the reference the bulk ingest is tested against.

`verdict(raw_text, ingest_time[, clock_skew_minutes])` returns `None` for a valid event, else `(reason, detail)` with the
quarantine reason and the field it concerns, applying the same rule order as
`ledger.ingest.validation` (see its docstring). It is for tests, emitters and single-event checks;
the ingest itself validates in bulk.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from pydantic import ValidationError

from ledger.contract import exact_json
from ledger.contract.duplicate_keys import first_repeated_keys
from ledger.contract.events import EVENT_TYPES, MODEL_BY_EVENT_TYPE
from ledger.contract.fields import COMMON_FIELDS, MAX_SEGMENT_SECONDS, all_fields
from ledger.core.settings import DEFAULT_CLOCK_SKEW_MINUTES

FUTURE_TOLERANCE = timedelta(minutes=5)
# The decimal fields of every event type, judged by the text they were sent as.
DECIMAL_FIELDS = frozenset(name for name, field in all_fields().items() if field.kind == "decimal")

# pydantic error types -> quarantine reasons; anything unlisted is a value error.
_TYPE_ERRORS = {
    "string_type",
    "int_type",
    "int_from_float",
    "int_parsing",
    "bool_type",
    "bool_parsing",
    "decimal_type",
    "decimal_parsing",
    "decimal_format",
    "datetime_type",
    "datetime_parsing",
    "datetime_from_date_parsing",
    "timestamp_format",
    "timezone_aware",
    "float_type",
    "model_type",
    "dict_type",
}
_ORDER = ("missing_field", "unknown_field", "bad_type", "personal_data", "bad_value")

Verdict = tuple[str, str | None] | None


def _reason(error: dict) -> str:
    kind = error["type"]
    if kind == "missing":
        return "missing_field"
    if kind == "extra_forbidden":
        return "unknown_field"
    if kind == "personal_data":
        return "personal_data"
    if kind in _TYPE_ERRORS:
        return "bad_type"
    if kind == "literal_error" and not isinstance(error.get("input"), str):
        return "bad_type"
    return "bad_value"


def verdict(
    raw_text: str, ingest_time: datetime, clock_skew_minutes: int = DEFAULT_CLOCK_SKEW_MINUTES
) -> Verdict:
    try:
        document = exact_json.loads(raw_text)
    except ValueError:
        return ("malformed_json", None)
    if not isinstance(document, dict):
        return ("malformed_json", None)
    # The bulk ingest's own rule, in DuckDB: one decision for every reader (and the collector).
    [repeated] = first_repeated_keys([raw_text])
    if repeated is not None:
        return ("duplicate_key", repeated)
    # A null carries nothing: it counts as an absent key, for known and unknown fields alike.
    # A decimal sent as such a number is judged by its own text, as the same value sent as a
    # string is (a float would be the nearest double's value, not the number sent).
    document = {
        key: value.text
        if key in DECIMAL_FIELDS
        and isinstance(value, (exact_json.JsonNumber, exact_json.JsonInteger))
        else value
        for key, value in document.items()
        if value is not None
    }
    for name in COMMON_FIELDS:
        if name not in document:
            return ("missing_field", name)
    event_type = document["event_type"]
    if not isinstance(event_type, str):
        return ("bad_type", "event_type")
    if event_type not in EVENT_TYPES:
        return ("bad_value", "event_type")
    model = MODEL_BY_EVENT_TYPE[event_type]
    try:
        event = model.model_validate_json(json.dumps(document))
    except ValidationError as exc:
        errors = [(_reason(err), err) for err in exc.errors()]
        for reason in _ORDER:
            for found, err in errors:
                if found == reason:
                    loc = err["loc"]
                    # Model-level rules (ended_at before started_at) have no field in loc.
                    return (reason, str(loc[0]) if loc else "ended_at")
        raise  # pragma: no cover - every pydantic error maps to a reason above
    if event.occurred_at > ingest_time + FUTURE_TOLERANCE:
        return ("future_timestamp", "occurred_at")
    if event_type == "turn.latency":
        skew = timedelta(minutes=clock_skew_minutes)
        for name in ("started_at", "ended_at"):
            if abs(getattr(event, name) - event.occurred_at) > skew:
                return ("clock_skew", name)
        if event.ended_at - event.started_at > timedelta(seconds=MAX_SEGMENT_SECONDS):
            return ("clock_skew", "ended_at")
    return None
