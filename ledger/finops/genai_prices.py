"""Prices from a maintained catalogue: pydantic's `genai-prices`, whose data ships in the package.

Nothing is fetched at run time: the catalogue is the snapshot of the pinned package version, so a
proposal is reproducible and names the version it came from. Prices are USD per million tokens;
the rate card keeps them as `price` per 1000000 in USD, so no conversion can lose a digit.

How the catalogue's price history maps onto rate-card windows:
- a price that starts on a date (`StartDateConstraint`) starts a window on that date, 00:00 UTC;
- a time-of-day price (DeepSeek's off-peak discount) cannot be said in a rate card: the price in
  force for most of the day is proposed, and the proposal says so;
- a tiered price (more for long prompts) proposes its base tier, and says so;
- a cached-input price the catalogue lacks means cached input is billed at the input price.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal
from importlib.metadata import version

CATALOGUE_PACKAGE = "genai-prices"
PER_MILLION = Decimal(1000000)
CATALOGUE_CURRENCY = "USD"

# Rate-card meter -> the catalogue's price keys, first one present wins (SPEC 4 meters).
METER_PRICE_KEYS: dict[str, tuple[str, ...]] = {
    "llm.input_tokens": ("input_mtok",),
    "llm.cached_input_tokens": ("cache_read_mtok", "input_mtok"),
    "llm.output_tokens": ("output_mtok",),
    "realtime.input_audio_tokens": ("input_audio_mtok",),
    "realtime.cached_input_audio_tokens": ("cache_audio_read_mtok", "input_audio_mtok"),
    "realtime.input_text_tokens": ("input_mtok",),
    "realtime.cached_input_text_tokens": ("cache_read_mtok", "input_mtok"),
    "realtime.output_audio_tokens": ("output_audio_mtok",),
    "realtime.output_text_tokens": ("output_mtok",),
}
COMPONENT_METERS: dict[str, tuple[str, ...]] = {
    component: tuple(m for m in METER_PRICE_KEYS if m.startswith(f"{component}."))
    for component in ("llm", "realtime")
}
TIME_OF_DAY_NOTE = "time-of-day pricing: the price in force for most of the day is proposed"
# Half-hour samples of a day: enough to find the price of most of the day.
_DAY_SAMPLES = tuple(time(hour, minute) for hour in range(24) for minute in (0, 30))


def catalogue_name() -> str:
    return f"{CATALOGUE_PACKAGE} {version(CATALOGUE_PACKAGE)}"


@dataclass(frozen=True)
class PriceWindow:
    meter: str
    price: Decimal  # per PER_MILLION, in CATALOGUE_CURRENCY
    effective_from: date
    effective_to: date | None
    note: str = ""


@dataclass
class CatalogueModel:
    provider: str
    model: str
    catalogue_id: str
    windows: list[PriceWindow] = field(default_factory=list)
    missing_meters: list[str] = field(default_factory=list)


def _snapshot_providers() -> list:
    from genai_prices.data_snapshot import get_snapshot

    return get_snapshot().providers


def _start_dates(info) -> list[date]:
    from genai_prices.types import ModelPrice, StartDateConstraint

    if isinstance(info.prices, ModelPrice):
        return []
    return sorted(
        {
            conditional.constraint.start_date
            for conditional in info.prices
            if isinstance(conditional.constraint, StartDateConstraint)
        }
    )


def _prices_of_day(info, day: date) -> tuple[dict[str, object], bool]:
    """The catalogue's prices in force for most of `day` (UTC), and whether they vary by hour."""
    samples = [
        info.get_prices(datetime.combine(day, moment, tzinfo=UTC)) for moment in _DAY_SAMPLES
    ]
    keyed = [
        tuple(sorted((k, repr(v)) for k, v in s.__dict__.items() if v is not None)) for s in samples
    ]
    counts = Counter(keyed)
    winner = counts.most_common(1)[0][0]
    chosen = samples[keyed.index(winner)]
    return {k: v for k, v in chosen.__dict__.items() if v is not None}, len(counts) > 1


def _meter_price(prices: dict[str, object], meter: str) -> tuple[Decimal | None, str]:
    from genai_prices.types import TieredPrices

    for position, key in enumerate(METER_PRICE_KEYS[meter]):
        value = prices.get(key)
        if value is None:
            continue
        note = ""
        if position > 0:
            note = f"the catalogue has no {METER_PRICE_KEYS[meter][0]}: billed at {key}"
        if isinstance(value, TieredPrices):
            return value.base, "; ".join(filter(None, [note, "tiered price: base tier"]))
        return Decimal(value), note
    return None, ""


def find_model(provider: str, model: str, component: str, since: date) -> CatalogueModel | None:
    """The catalogue's prices for `provider`/`model` as rate-card windows from `since` on.

    The provider must be the catalogue's own provider id (no resale or fallback listings: a
    price from a reseller is not the provider's price). None when the catalogue lacks it.
    """
    entry = next((p for p in _snapshot_providers() if p.id == provider), None)
    if entry is None:
        return None
    info = next((m for m in entry.models if m.is_match(model)), None)
    if info is None:
        return None
    found = CatalogueModel(provider, model, info.id)
    starts = [since] + [d for d in _start_dates(info) if d > since]
    ends: list[date | None] = [*starts[1:], None]
    for meter in COMPONENT_METERS[component]:
        open_window: PriceWindow | None = None
        for start, end in zip(starts, ends, strict=True):
            prices, varies = _prices_of_day(info, start)
            price, note = _meter_price(prices, meter)
            if price is None:
                if meter not in found.missing_meters:
                    found.missing_meters.append(meter)
                continue
            if varies:
                note = "; ".join(filter(None, [note, TIME_OF_DAY_NOTE]))
            if open_window is not None and open_window.price == price:
                # The same price across a catalogue boundary: one window, not two.
                open_window = PriceWindow(meter, price, open_window.effective_from, end, note)
                found.windows[-1] = open_window
                continue
            open_window = PriceWindow(meter, price, start, end, note)
            found.windows.append(open_window)
    return found


def today_utc() -> date:
    return datetime.now(UTC).date()
