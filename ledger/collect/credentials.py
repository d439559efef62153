"""The HTTP collector's credentials: which token is which source, and the webhooks' secrets.

Read from a YAML file (`ledger collect serve --config FILE`); each secret is given there either
inline (`token: ...`, for a file kept like any secret) or by the name of an environment variable
(`token_env: NAME`). Secrets are held in `Secret`, whose text form is redacted, so no log line,
error or repr ever shows one.

    sources:                      # bearer tokens for POST /v1/events; the token decides `source`
      gw-eu-1: {token_env: LEDGER_TOKEN_GW_EU_1}
    vapi:                         # POST /v1/webhooks/vapi, Vapi's server secret header
      secret_env: VAPI_SERVER_SECRET
      source: vapi
      tenant_id: acme-telecom     # when the call's metadata names no tenant_id
    retell:                       # POST /v1/webhooks/retell, signed with a Retell API key
      api_key_env: RETELL_API_KEY
      source: retell
      tenant_id: acme-telecom
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ledger.contract.events import IDENTIFIER_PATTERN, Scenario

# Retell's signature header is `v=<unix ms>,d=<hex HMAC-SHA256(api key, body + ms)>`; a signature
# older or newer than five minutes is refused, so a captured request cannot be replayed later.
RETELL_SIGNATURE = re.compile(r"v=(\d+),d=([0-9a-fA-F]+)")
RETELL_TOLERANCE_MS = 5 * 60 * 1000


class CredentialsError(ValueError):
    """A credentials file that cannot be used; the message names the file and entry, never a secret."""


class Secret:
    """A secret value whose text form is redacted."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def matches(self, candidate: str | None) -> bool:
        if candidate is None:
            return False
        return hmac.compare_digest(candidate.encode(), self._value.encode())

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


@dataclass(frozen=True)
class WebhookSettings:
    secret: Secret
    source: str
    tenant_id: str
    scenario: str = "other"


@dataclass(frozen=True)
class Credentials:
    tokens: dict[str, str] = field(default_factory=dict)  # sha256(token) -> source
    vapi: WebhookSettings | None = None
    retell: WebhookSettings | None = None

    def source_for_token(self, token: str | None) -> str | None:
        if not token:
            return None
        # Looked up by digest, so the map holds no token and the lookup time does not depend on it.
        return self.tokens.get(token_digest(token))


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bearer_token(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def retell_signature_valid(
    secret: Secret, body: bytes, header: str | None, now_ms: int | None = None
) -> bool:
    match = RETELL_SIGNATURE.fullmatch((header or "").strip())
    if match is None:
        return False
    stamp, digest = match.groups()
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    if abs(now_ms - int(stamp)) > RETELL_TOLERANCE_MS:
        return False
    expected = hmac.new(secret.reveal().encode(), body + stamp.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, digest.lower())


def retell_signature(secret: str, body: bytes, now_ms: int | None = None) -> str:
    """The header Retell sends for `body` (for tests and for replaying a stored webhook)."""
    stamp = str(int(time.time() * 1000) if now_ms is None else now_ms)
    digest = hmac.new(secret.encode(), body + stamp.encode(), hashlib.sha256).hexdigest()
    return f"v={stamp},d={digest}"


def _secret(entry: dict, key: str, where: str, environ: dict[str, str]) -> Secret:
    if entry.get(key):
        return Secret(str(entry[key]))
    variable = entry.get(f"{key}_env")
    if variable:
        value = environ.get(str(variable))
        if not value:
            raise CredentialsError(f"{where}: environment variable {variable} is not set")
        return Secret(value)
    raise CredentialsError(f"{where}: give `{key}` or `{key}_env`")


def _identifier(value: object, where: str) -> str:
    text = str(value) if value is not None else ""
    if not re.fullmatch(IDENTIFIER_PATTERN, text):
        raise CredentialsError(f"{where}: {text!r} is not an identifier (1-128 printable ASCII)")
    return text


def _webhook(entry: object, name: str, key: str, path: Path, environ: dict[str, str]):
    if entry is None:
        return None
    where = f"{path}: {name}"
    if not isinstance(entry, dict):
        raise CredentialsError(f"{where}: expected a mapping")
    scenario = str(entry.get("scenario", "other"))
    if scenario not in Scenario.__args__:  # type: ignore[attr-defined]
        raise CredentialsError(f"{where}.scenario: {scenario!r} is not one of the contract's")
    return WebhookSettings(
        secret=_secret(entry, key, where, environ),
        source=_identifier(entry.get("source", name), f"{where}.source"),
        tenant_id=_identifier(entry.get("tenant_id"), f"{where}.tenant_id"),
        scenario=scenario,
    )


def load_credentials(path: Path, environ: dict[str, str] | None = None) -> Credentials:
    env = dict(os.environ if environ is None else environ)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise CredentialsError(f"{path}: cannot be read as YAML ({type(exc).__name__})") from exc
    if not isinstance(document, dict):
        raise CredentialsError(f"{path}: expected a mapping with sources, vapi, retell")
    unknown = set(document) - {"sources", "vapi", "retell"}
    if unknown:
        raise CredentialsError(f"{path}: unknown keys {sorted(unknown)}")
    tokens: dict[str, str] = {}
    for source, entry in (document.get("sources") or {}).items():
        where = f"{path}: sources.{source}"
        name = _identifier(source, where)
        if not isinstance(entry, dict):
            raise CredentialsError(f"{where}: expected a mapping with token or token_env")
        digest = token_digest(_secret(entry, "token", where, env).reveal())
        if digest in tokens:
            raise CredentialsError(f"{where}: the same token as sources.{tokens[digest]}")
        tokens[digest] = name
    return Credentials(
        tokens=tokens,
        vapi=_webhook(document.get("vapi"), "vapi", "secret", path, env),
        retell=_webhook(document.get("retell"), "retell", "api_key", path, env),
    )
