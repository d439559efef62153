"""Which provider and model a collected usage line names (SPEC 9).

Frameworks say who served a request in ways the rate card cannot match: LiveKit's OpenAI plugin
reports its endpoint's host (`api.openai.com`, or `127.0.0.1:8080` for a local server), Deepgram
and Cartesia report `Deepgram` and `Cartesia`, LiveKit Inference reports `livekit` with the real
provider folded into the model (`deepgram/nova-3:en`), and Pipecat names no provider at all. The
collectors name a service, in this order:

1. the application's explicit override (`services=`), always;
2. LiveKit Inference's `provider/model`, split (the `:language` or `:voice` suffix dropped);
3. the endpoint's host, when it is a known provider's API (an OpenAI-compatible plugin pointed at
   Groq is Groq);
4. the plugin's own package (`livekit.plugins.openai`, `pipecat.services.deepgram` -> that name),
   so a plugin pointed at an unknown host (a proxy, a local stub) is its own provider;
5. what the framework reported, lower-cased.

The model is kept as reported (model aliases, e.g. `nova-3-general` -> `nova-3`, are the pricing
side's reference data). An override that names a model other than the one the framework reports
wins all the same, but is said (`DeclaredNames`): a deployment that moved to a dearer model while
its `services=` still names the old one would otherwise be priced low without a word.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

# The public API hosts of providers the rate card knows, host -> provider.
KNOWN_HOSTS = {
    "api.openai.com": "openai",
    "api.deepgram.com": "deepgram",
    "api.cartesia.ai": "cartesia",
    "api.elevenlabs.io": "elevenlabs",
    "api.groq.com": "groq",
    "api.deepseek.com": "deepseek",
    "api.anthropic.com": "anthropic",
    "generativelanguage.googleapis.com": "google",
    "api.mistral.ai": "mistral",
    "api.together.xyz": "together",
    "api.fireworks.ai": "fireworks",
    "api.x.ai": "xai",
    "api.cerebras.ai": "cerebras",
    "api.assemblyai.com": "assemblyai",
    "api.perplexity.ai": "perplexity",
    "openrouter.ai": "openrouter",
    "dashscope.aliyuncs.com": "aliyun",
    "dashscope-intl.aliyuncs.com": "aliyun",
    "api.moonshot.cn": "moonshot",
    "api.rime.ai": "rime",
    "api.speechmatics.com": "speechmatics",
}
# Hosts known by their suffix (one per customer resource), suffix -> provider.
KNOWN_HOST_SUFFIXES = {
    ".openai.azure.com": "azure",
    ".cognitiveservices.azure.com": "azure",
    ".deepgram.com": "deepgram",
    ".elevenlabs.io": "elevenlabs",
    ".cartesia.ai": "cartesia",
}
# Packages whose plugins speak for one provider: the module path's prefix before the provider.
_PLUGIN_PACKAGES = (("livekit", "plugins"), ("pipecat", "services"))
_INFERENCE_PACKAGE = ("livekit", "agents", "inference")
# What LiveKit Inference reports as the provider of every model it routes.
INFERENCE_PROVIDER = "livekit"
_HOST_LIKE = re.compile(r"^(\[[0-9a-f:]+\]|[a-z0-9-]+(\.[a-z0-9-]+)+|localhost)(:\d+)?$")


@dataclass(frozen=True)
class Service:
    """What a collector knows of one service: what the framework reported and, where the
    plugin object is at hand, its package and endpoint."""

    reported_provider: str | None = None
    reported_model: str | None = None
    package: str | None = None  # the plugin's module, e.g. "livekit.plugins.openai.llm"
    endpoint: str | None = None  # its base URL or host, e.g. "https://api.groq.com/openai/v1"


def host_provider(endpoint: str | None) -> str | None:
    """The provider whose public API `endpoint` (a URL or a host[:port]) is, or None."""
    host = _hostname(endpoint)
    if host is None:
        return None
    if host in KNOWN_HOSTS:
        return KNOWN_HOSTS[host]
    for suffix, provider in KNOWN_HOST_SUFFIXES.items():
        if host.endswith(suffix):
            return provider
    return None


def _hostname(endpoint: str | None) -> str | None:
    text = (endpoint or "").strip().lower()
    if not text:
        return None
    if "://" not in text:
        if not _HOST_LIKE.match(text):
            return None
        text = f"//{text}"
    try:
        return urlsplit(text).hostname
    except ValueError:
        return None


def package_provider(module: str | None) -> str | None:
    """`livekit.plugins.openai.llm` / `pipecat.services.openai.llm` -> `openai`; None for a
    module outside the plugin packages (the application's own service, LiveKit Inference)."""
    parts = (module or "").split(".")
    for prefix in _PLUGIN_PACKAGES:
        if tuple(parts[:2]) == prefix and len(parts) > 3 and parts[2]:
            return parts[2].lower()
    return None


def split_inference_model(model: str | None) -> tuple[str, str] | None:
    """LiveKit Inference's `deepgram/nova-3:en` -> (`deepgram`, `nova-3`); None when `model` is
    not in that form. The part after `:` is a language or a voice, not a model."""
    text = (model or "").strip()
    if "/" not in text:
        return None
    provider, _, name = text.partition("/")
    name = name.rsplit(":", 1)[0] if ":" in name else name
    if not provider or not name:
        return None
    return provider.lower(), name


def _is_inference(service: Service) -> bool:
    module = tuple((service.package or "").split(".")[:3])
    reported = (service.reported_provider or "").strip().lower()
    return module == _INFERENCE_PACKAGE or reported == INFERENCE_PROVIDER


def name_service(
    service: Service, override: tuple[str | None, str | None] | None = None
) -> tuple[str | None, str | None]:
    """(provider, model) for a usage line, by the rules of this module's docstring; either may
    be None when nothing names it (the caller falls back to "unknown")."""
    reported = (service.reported_provider or "").strip()
    model = (service.reported_model or "").strip() or None
    if model == "unknown":
        model = None
    provider: str | None = None
    if _is_inference(service) and (split := split_inference_model(model)) is not None:
        provider, model = split
    if provider is None:
        provider = (
            host_provider(service.endpoint)
            or host_provider(reported)
            or package_provider(service.package)
        )
    if provider is None and reported and reported.lower() != "unknown":
        host = _hostname(reported)
        provider = host or reported.lower()
    if override is not None:
        provider = override[0] or provider
        model = override[1] or model
    return provider, model


def endpoint_of(plugin: Any) -> str | None:
    """The base URL a plugin object sends its requests to, where it keeps one where we look
    (the OpenAI SDK client's `base_url`, or the plugin's own `base_url` option)."""
    client = getattr(plugin, "_client", None)
    candidates = (
        getattr(client, "base_url", None),
        getattr(getattr(plugin, "_opts", None), "base_url", None),
        getattr(getattr(plugin, "_opts", None), "endpoint_url", None),  # LiveKit's Deepgram
        getattr(plugin, "_base_url", None),
        getattr(plugin, "base_url", None),
        getattr(plugin, "_url", None),
    )
    for value in candidates:
        if value is not None and not callable(value):
            text = str(value)
            if "://" in text or _HOST_LIKE.match(text.lower()):
                return text
    return None


log = logging.getLogger(__name__)


class DeclaredNames:
    """A collector's record of overrides (`services=`) that name another model than the one the
    framework reports for the same usage: a warning the first time for each (kind, declared,
    reported), and `disagreements` counting every usage line priced under such a name."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.disagreements: Counter[tuple[str, str, str]] = Counter()

    def check(self, kind: str, reported_model: str | None, override) -> None:
        declared = (override[1] if override else None) or ""
        reported = (reported_model or "").strip()
        if not declared or not reported or reported.lower() == "unknown":
            return
        if _bare_model(reported).startswith(_bare_model(declared)):
            return  # the same model, or a dated snapshot of it (gpt-4.1 -> gpt-4.1-2025-04-14)
        key = (kind, declared, reported)
        if key not in self.disagreements:
            log.warning(
                "session %s: services= names the %s model %r but the framework reports %r; the "
                "usage is priced as %r (remove the override's model, or correct it)",
                self.session_id,
                kind,
                declared,
                reported,
                declared,
            )
        self.disagreements[key] += 1


def _bare_model(model: str) -> str:
    """`deepgram/nova-3:en` -> `nova-3`: a LiveKit Inference name without provider or suffix."""
    return model.lower().rsplit("/", 1)[-1].split(":", 1)[0]
