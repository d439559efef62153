"""The HTTP collector's credentials: which token is which source, and the webhooks' secrets.

Read from a YAML file (`ledger collect serve --config FILE`); each secret is given there either
inline (`token: ...`, for a file kept like any secret) or by the name of an environment variable
(`token_env: NAME`). Secrets are held in `Secret`, whose text form is redacted, so no log line,
error or repr ever shows one.

    sources:                      # bearer tokens for POST /v1/events; the token decides `source`
      gw-eu-1:
        token_env: LEDGER_TOKEN_GW_EU_1
        tenants: [acme-telecom, bright-bank]    # required: the tenants this token may write
    vapi:                         # POST /v1/webhooks/vapi, Vapi's server secret header
      secret_env: VAPI_SERVER_SECRET
      source: vapi
      tenant_id: acme-telecom     # when the call's metadata names no tenant_id
      tenants: [acme-telecom, nova-retail]      # optional; default: tenant_id alone
    retell:                       # POST /v1/webhooks/retell, signed with a Retell API key
      api_key_env: RETELL_API_KEY
      source: retell
      tenant_id: acme-telecom

A credential grants its source and a set of tenants (SPEC 12, fail closed): an event for any other
tenant is refused. A token's `tenants` list is required, so a config written before grants existed
stops the collector at start-up with the entry named instead of letting every token write every
tenant; `["*"]` grants every tenant, and says so in the file. A webhook grants its `tenant_id` unless
it lists more (a call's metadata may name another tenant).
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


EVERY_TENANT = "*"


@dataclass(frozen=True)
class TenantGrant:
    """The tenants a credential may write events for: those named, or every tenant (`*`)."""

    tenants: frozenset[str] = frozenset()
    every_tenant: bool = False

    def allows(self, tenant: object) -> bool:
        return self.every_tenant or (isinstance(tenant, str) and tenant in self.tenants)


NO_TENANT = TenantGrant()


@dataclass(frozen=True)
class WebhookSettings:
    secret: Secret
    source: str
    tenant_id: str
    scenario: str = "other"
    tenants: TenantGrant | None = None  # None: the configured tenant_id alone

    @property
    def grant(self) -> TenantGrant:
        return self.tenants or TenantGrant(frozenset({self.tenant_id}))


@dataclass(frozen=True)
class Credentials:
    tokens: dict[str, str] = field(default_factory=dict)  # sha256(token) -> source
    vapi: WebhookSettings | None = None
    retell: WebhookSettings | None = None
    grants: dict[str, TenantGrant] = field(default_factory=dict)  # source -> its tenants

    def grant_for(self, source: str) -> TenantGrant:
        # A source without a grant writes no tenant: fail closed.
        return self.grants.get(source, NO_TENANT)

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


def _grant(value: object, where: str) -> TenantGrant:
    """`tenants:` of an entry: a non-empty list of tenant ids, or `["*"]` for every tenant."""
    if not isinstance(value, list) or not value:
        raise CredentialsError(
            f"{where}: give the tenants this credential may write as a non-empty list "
            f'(e.g. [acme-telecom, bright-bank]), or ["{EVERY_TENANT}"] for every tenant'
        )
    if EVERY_TENANT in value:
        if len(value) > 1:
            raise CredentialsError(f'{where}: "{EVERY_TENANT}" grants every tenant; list it alone')
        return TenantGrant(every_tenant=True)
    return TenantGrant(frozenset(_identifier(tenant, where) for tenant in value))


def _webhook(entry: object, name: str, key: str, path: Path, environ: dict[str, str]):
    if entry is None:
        return None
    where = f"{path}: {name}"
    if not isinstance(entry, dict):
        raise CredentialsError(f"{where}: expected a mapping")
    scenario = str(entry.get("scenario", "other"))
    if scenario not in Scenario.__args__:  # type: ignore[attr-defined]
        raise CredentialsError(f"{where}.scenario: {scenario!r} is not one of the contract's")
    tenant_id = _identifier(entry.get("tenant_id"), f"{where}.tenant_id")
    grant = _grant(entry["tenants"], f"{where}.tenants") if "tenants" in entry else None
    if grant is not None and not grant.allows(tenant_id):
        raise CredentialsError(f"{where}.tenants: must include its tenant_id {tenant_id!r}")
    return WebhookSettings(
        secret=_secret(entry, key, where, environ),
        source=_identifier(entry.get("source", name), f"{where}.source"),
        tenant_id=tenant_id,
        scenario=scenario,
        tenants=grant,
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
    grants: dict[str, TenantGrant] = {}
    for source, entry in (document.get("sources") or {}).items():
        where = f"{path}: sources.{source}"
        name = _identifier(source, where)
        if not isinstance(entry, dict):
            raise CredentialsError(f"{where}: expected a mapping with token or token_env")
        digest = token_digest(_secret(entry, "token", where, env).reveal())
        if digest in tokens:
            raise CredentialsError(f"{where}: the same token as sources.{tokens[digest]}")
        tokens[digest] = name
    # Checked once every token is known, so a file's token errors are named first.
    for source, entry in (document.get("sources") or {}).items():
        grants[str(source)] = _grant(entry.get("tenants"), f"{path}: sources.{source}.tenants")
    return Credentials(
        tokens=tokens,
        vapi=_webhook(document.get("vapi"), "vapi", "secret", path, env),
        retell=_webhook(document.get("retell"), "retell", "api_key", path, env),
        grants=grants,
    )
