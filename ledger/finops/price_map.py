"""Voice prices from LiteLLM's published price map (`model_prices_and_context_window.json`).

genai-prices (ledger.finops.genai_prices) prices LLM tokens; it has no per-second or per-character
prices. LiteLLM's price map has them: ASR per second, TTS per character, realtime audio tokens.
The map ships inside the `litellm` wheel as `litellm/model_prices_and_context_window_backup.json`;
LiteLLM itself (a 44 MB wheel with a proxy server and dozens of dependencies) is never installed.
`make env` downloads the wheel pinned in requirements-prices.txt with pip, without its
dependencies, reads the one JSON file out of the zip and keeps it in the environment
(`<venv>/share/voice-ledger/`); the wheel is then deleted. Nothing is fetched at run time, so a
proposal is reproducible and names the version it came from. PyPI files never change, so the pin
fixes the content.

Prices are parsed from the JSON's text as Decimal (`parse_float=Decimal`), never float, and scaled
exactly: a per-second price becomes `price` per 60 seconds, a per-character or per-token price
`price` per 1000000, so no digit is lost. Where the entry records the provider's own per-minute
price (`metadata.original_pricing_per_minute`) and its per-second price is that price rounded, the
per-minute price is the one taken: 0.00012833 x 60 is not Deepgram's 0.0077. The map has no price
history: one open window.

Speech has a price class (SPEC 4): `streaming`, what voice agents do and the default, or `batch`
(pre-recorded audio). The map lists a provider's streaming prices under `provider/streaming/model`;
for a provider that has such listings, its plain `provider/model` entry is the batch price. A
streaming price is taken only from a streaming listing (or from a provider whose listings state no
class): the batch price of a model is never proposed for streamed speech, it is named instead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from decimal import Context, Decimal, localcontext
from functools import cache
from pathlib import Path
from typing import TypeGuard

from ledger.core.settings import REPO_ROOT

PRICE_MAP_PACKAGE = "litellm"
PRICE_MAP_MEMBER = "litellm/model_prices_and_context_window_backup.json"
REQUIREMENTS = REPO_ROOT / "requirements-prices.txt"
# Where `fetch` keeps the map: inside the environment that `make env` builds.
CACHE_DIR = Path(sys.prefix) / "share" / "voice-ledger"
PRICE_MAP_CURRENCY = "USD"
PER_MINUTE = Decimal(60)
PER_MILLION = Decimal(1000000)

# Rate-card meter -> the map's price keys, first one present wins, and the `per` of the row.
METER_PRICE_KEYS: dict[str, tuple[tuple[str, ...], Decimal]] = {
    "asr.audio_seconds": (("input_cost_per_second",), PER_MINUTE),
    "tts.characters": (("input_cost_per_character",), PER_MILLION),
    "llm.input_tokens": (("input_cost_per_token",), PER_MILLION),
    "llm.cached_input_tokens": (
        ("cache_read_input_token_cost", "input_cost_per_token"),
        PER_MILLION,
    ),
    "llm.output_tokens": (("output_cost_per_token",), PER_MILLION),
    "realtime.input_audio_tokens": (("input_cost_per_audio_token",), PER_MILLION),
    "realtime.cached_input_audio_tokens": (
        ("cache_read_input_audio_token_cost", "input_cost_per_audio_token"),
        PER_MILLION,
    ),
    "realtime.input_text_tokens": (("input_cost_per_token",), PER_MILLION),
    "realtime.cached_input_text_tokens": (
        ("cache_read_input_token_cost", "input_cost_per_token"),
        PER_MILLION,
    ),
    "realtime.output_audio_tokens": (("output_cost_per_audio_token",), PER_MILLION),
    "realtime.output_text_tokens": (("output_cost_per_token",), PER_MILLION),
}
COMPONENT_METERS: dict[str, tuple[str, ...]] = {
    component: tuple(m for m in METER_PRICE_KEYS if m.startswith(f"{component}."))
    for component in ("asr", "tts", "llm", "realtime")
}
# SPEC 4: speech price classes (`streaming` the default) and the components that have them.
STREAMING, BATCH = "streaming", "batch"
PRICE_CLASSES = (STREAMING, BATCH)
SPEECH_COMPONENTS = ("asr", "tts")
# A per-second price whose per-minute original differs by less than this is that price rounded.
ROUNDED_PER_SECOND = Decimal("0.000000005")

# The map's `mode` of each component's models: a chat model's per-token price is no TTS price.
COMPONENT_MODES: dict[str, tuple[str, ...]] = {
    "asr": ("audio_transcription",),
    "tts": ("audio_speech",),
    "llm": ("chat", "completion", "responses"),
    "realtime": ("realtime", "chat"),
}


def pinned_version(requirements: Path = REQUIREMENTS) -> str:
    """The version of `litellm==X` in requirements-prices.txt."""
    for line in requirements.read_text().splitlines():
        found = re.fullmatch(rf"{PRICE_MAP_PACKAGE}==([\w.]+)", line.split("#")[0].strip())
        if found:
            return found.group(1)
    raise ValueError(f"{requirements} pins no {PRICE_MAP_PACKAGE}==<version>")


def price_map_path(version: str | None = None) -> Path:
    """The map `make env` keeps for the pinned version (`Settings.price_map`, LEDGER_PRICE_MAP,
    names another, e.g. a reviewed newer map)."""
    return CACHE_DIR / f"{PRICE_MAP_PACKAGE}-{version or pinned_version()}-model_prices.json"


def extract_price_map(wheel: Path, target: Path) -> None:
    """Copy the map out of a downloaded wheel to `target`, atomically."""
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(PRICE_MAP_MEMBER)
    json.loads(data, parse_float=Decimal)  # refuse to keep a file that is not the map's JSON
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(partial, 0o644)
        os.replace(partial, target)
    finally:
        Path(partial).unlink(missing_ok=True)


def fetch(version: str | None = None) -> Path:
    """Download the pinned wheel (no dependencies), keep its price map, delete the wheel."""
    version = version or pinned_version()
    target = price_map_path(version)
    if target.exists():
        return target
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--only-binary=:all:", "--dest", scratch,
             f"{PRICE_MAP_PACKAGE}=={version}"],
            check=True,
        )  # fmt: skip
        (wheel,) = Path(scratch).glob(f"{PRICE_MAP_PACKAGE}-{version}-*.whl")
        extract_price_map(wheel, target)
    return target


def price_map_name(version: str | None = None) -> str:
    return f"LiteLLM {version or pinned_version()} price map"


@cache
def _load(path: Path) -> dict[str, object]:
    return json.loads(path.read_bytes(), parse_float=Decimal)


def load_price_map(path: Path | None = None) -> dict[str, object]:
    path = path or price_map_path()
    if not path.exists():
        raise FileNotFoundError(
            f"no LiteLLM price map at {path}; `make env` keeps it there (or run "
            "`python -m ledger.finops.price_map`)"
        )
    return _load(path)


@dataclass
class MapModel:
    provider: str
    model: str
    map_key: str
    # meter -> (price, per, note), in PRICE_MAP_CURRENCY
    prices: dict[str, tuple[Decimal, Decimal, str]] = field(default_factory=dict)
    missing_meters: list[str] = field(default_factory=list)
    # The speech price class of the entry: `streaming`, `batch`, or None where the map states none.
    price_class: str | None = None
    # Why no price was taken although the map lists the model: only another class's price.
    other_class: str | None = None


def _is_number(value: object) -> TypeGuard[int | Decimal]:
    return isinstance(value, int | Decimal) and not isinstance(value, bool)


def _entry_keys(
    provider: str, model: str, component: str, price_class: str, prices: dict[str, object]
) -> tuple[list[tuple[str, str | None]], list[str]]:
    """The keys to try, each with the price class it holds, and the keys of another class."""
    plain = [f"{provider}/{model}", model]
    if component not in SPEECH_COMPONENTS:
        return [(key, None) for key in plain], []
    streaming = f"{provider}/streaming/{model}"
    split = any(str(key).startswith(f"{provider}/streaming/") for key in prices)
    if not split:  # the provider's listings state no class
        return [(key, None) for key in plain], []
    if price_class == STREAMING:
        return [(streaming, STREAMING)], plain
    return [(key, BATCH) for key in plain], [streaming]


def _provider_entry(
    prices: dict[str, object], key: str, provider: str, component: str
) -> dict | None:
    """The map's entry `key` when it is `provider`'s own (a reseller's listing is not the
    provider's price) and of `component`'s kind."""
    entry = prices.get(key)
    if not isinstance(entry, dict) or entry.get("litellm_provider") != provider:
        return None
    return entry if entry.get("mode") in COMPONENT_MODES[component] else None


def _meter_price(entry: dict, meter: str) -> tuple[Decimal, Decimal, str] | None:
    """(price, per, note) of one rate-card meter from a map entry, or None."""
    keys, per = METER_PRICE_KEYS[meter]
    for position, name in enumerate(keys):
        value = entry.get(name)
        if not _is_number(value):
            continue
        note = f"the map has no {keys[0]}: billed at {name}" if position else ""
        with localcontext(Context(prec=60)):  # exact: the map's digits are few
            price = Decimal(value) * per
            metadata = entry.get("metadata")
            minute = (
                metadata.get("original_pricing_per_minute") if isinstance(metadata, dict) else None
            )
            if (
                per == PER_MINUTE
                and _is_number(minute)
                and abs(price - Decimal(minute)) < ROUNDED_PER_SECOND * per
            ):
                return Decimal(minute), per, "the provider's per-minute price"
        return price, per, note
    return None


def find_voice_model(
    provider: str,
    model: str,
    component: str,
    prices: dict[str, object] | None = None,
    price_class: str = STREAMING,
) -> MapModel | None:
    """The map's prices of `provider`/`model` for `component`'s meters, of speech's
    `price_class`, or None.

    The entry must be the provider's own (`litellm_provider` equal to the rate card's provider).
    Keys are `provider/model` or `model`, and for streamed speech of a provider that lists its
    streaming prices apart, `provider/streaming/model` only: when the map has the model's other
    class alone, the result has no prices and says so (`other_class`).
    """
    prices = load_price_map() if prices is None else prices
    keys, other_keys = _entry_keys(provider, model, component, price_class, prices)
    for key, entry_class in keys:
        entry = _provider_entry(prices, key, provider, component)
        if entry is None:
            continue
        found = MapModel(provider, model, key, price_class=entry_class)
        for meter in COMPONENT_METERS[component]:
            priced = _meter_price(entry, meter)
            if priced is None:
                found.missing_meters.append(meter)
            else:
                found.prices[meter] = priced
        return found
    for key in other_keys:
        if _provider_entry(prices, key, provider, component) is not None:
            other = BATCH if price_class == STREAMING else STREAMING
            return MapModel(
                provider,
                model,
                key,
                other_class=f"the map lists only its {other} price ({key}), no {price_class} one",
            )
    return None


if __name__ == "__main__":
    print(fetch())
