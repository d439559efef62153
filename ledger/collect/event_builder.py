"""Building contract events: deterministic event ids, RFC 3339 text, exact decimals.

Every collector builds its events here so that they share one idea of an event id (derived from the
framework's own ids, so a re-sent report deduplicates) and one textual form of times and amounts.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from ledger.contract.events import IDENTIFIER_PATTERN, SHORT_CODE_PATTERN

# The contract keeps 6 decimal places (micro-units, microseconds); more is refused, so amounts and
# durations that arrive as binary floats are rounded half-even to 6 places once, here.
SIX_PLACES = Decimal("0.000001")


def stable_id(*parts: object) -> str:
    """A deterministic event id from the framework's own ids: the same report, the same id."""
    text = "\x1f".join(str(part) for part in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class PayloadError(ValueError):
    """A webhook body that is not the documented shape, or that names what cannot be recorded; the
    message says which field and why (the collector answers 400 with it)."""


def metadata_tenant(value: object, fallback: str, where: str) -> str:
    """The tenant a call's metadata names (`where`: the field), or `fallback`, the webhook's own
    tenant, when it names none. A name that is not a tenant id (`bright bank`) is refused, never
    billed to `fallback`: the call belongs to someone the ledger cannot name (issue 41)."""
    if value is None or value == "":
        return fallback
    text = str(value)
    if not re.fullmatch(IDENTIFIER_PATTERN, text):
        shown = text if len(text) <= 64 else f"{text[:64]}…"
        raise PayloadError(
            f"{where} {shown!r} is not a tenant id (1-128 printable ASCII characters, no "
            f"spaces): the call is refused, not billed to the webhook's tenant {fallback}"
        )
    return text


def identifier(value: object, fallback: str) -> str:
    """`value` as a contract identifier, or `fallback` when it cannot be one (never free text)."""
    text = str(value) if value is not None else ""
    return text if re.fullmatch(IDENTIFIER_PATTERN, text) else fallback


def short_code(value: object) -> str | None:
    """`value` as a short code (spaces and other characters become `_`), or None when empty."""
    if value is None:
        return None
    text = re.sub(r"[^A-Za-z0-9_.:-]+", "_", str(value)).strip("_")[:64]
    return text if text and re.fullmatch(SHORT_CODE_PATTERN, text) else None


def decimal_text(value: object) -> str:
    """A non-negative decimal as plain text with at most 6 places (floats go through their repr)."""
    amount = value if isinstance(value, Decimal) else Decimal(str(value))
    amount = max(amount, Decimal(0)).quantize(SIX_PLACES, rounding=ROUND_HALF_EVEN).normalize()
    return format(amount, "f")


def timestamp_text(moment: datetime) -> str:
    """RFC 3339 in UTC with milliseconds, the form every collector writes."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def from_unix(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def non_negative_int(value: object) -> int:
    return max(int(value or 0), 0)


@dataclass(frozen=True)
class SessionEvents:
    """Builds the events of one session: the common fields once, ids from the framework's ids."""

    source: str
    tenant_id: str
    session_id: str

    def event(self, event_type: str, occurred_at: datetime, key: tuple, **fields: Any) -> dict:
        """One contract event; `key` is what identifies it in the framework (request id, ...)."""
        return {
            "event_id": stable_id(self.source, self.session_id, event_type, *key),
            "source": self.source,
            "event_type": event_type,
            "occurred_at": timestamp_text(occurred_at),
            "tenant_id": self.tenant_id,
            "session_id": self.session_id,
            **{name: value for name, value in fields.items() if value is not None},
        }
