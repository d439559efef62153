"""Who may read the boards, and which tenants each reader sees: `$LEDGER_HOME/access.yaml`.

Without the file the boards are for the operator on this machine: `ledger serve` binds 127.0.0.1
and shows every tenant. With it every page run first identifies the reader and shows only the
tenants the file grants them (the `finance` role: all), in every query (dashboards/sign_in.py).

    mode: proxy                       # an auth proxy (oauth2-proxy style) signs people in and
    header: X-Forwarded-Email         # passes who they are in this request header
    users:
      - email: ops@acme.example
        tenants: [acme-telecom]
      - email: cfo@example.com
        role: finance                 # every tenant

    mode: oidc                        # Streamlit's own sign-in (st.login): `[auth]` in
    users: [...]                      # .streamlit/secrets.toml names the OpenID Connect provider

In `proxy` mode the header is trusted only from the proxy: from a peer address in
`trusted_proxies` (addresses or CIDR networks; default: loopback only, a proxy on the same
machine), or with a shared secret the proxy adds to every request:

    mode: proxy
    trusted_proxies: [10.0.0.5, 10.8.0.0/16]  # the proxy's own addresses, as the boards see them
    proxy_secret_header: X-Proxy-Secret       # the proxy sets this header on every request ...
    proxy_secret_env: LEDGER_PROXY_SECRET     # ... to the value of this environment variable
    users: [...]

With a secret and no `trusted_proxies`, only the secret is trusted (any peer address); with both, a
request needs both. The secret lives in the environment only, never in this file, a log or a page.
A request whose header cannot be trusted has no reader (dashboards/sign_in.py denies it).
Identities compare case-insensitively.

The boards fail closed: while the file of a sign-in deployment is missing or unusable, every
request is denied with a page naming the file and the fault (dashboards/sign_in.py).
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ledger.contract.events import IDENTIFIER_PATTERN

DEFAULT_HEADER = "X-Forwarded-Email"
# A proxy on the same machine: Streamlit reports a loopback peer as no address at all.
LOOPBACK = ("127.0.0.1/32", "::1/128")
# An environment variable name (POSIX portable characters).
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# An HTTP header name (RFC 9110 token characters).
_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}")


class AccessError(ValueError):
    """An access file that cannot be used; the message names the file, the entry and the rule."""


class UserGrant(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    email: str = Field(min_length=3, max_length=254)
    role: Literal["tenant", "finance"] = "tenant"
    tenants: tuple[str, ...] = ()

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        if not re.fullmatch(r"[^@\s]+@[^@\s]+", value):
            raise ValueError(f"{value!r} is not an e-mail address")
        return value.lower()

    @field_validator("tenants")
    @classmethod
    def _tenants(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for tenant in value:
            if not re.fullmatch(IDENTIFIER_PATTERN, tenant):
                raise ValueError(f"{tenant!r} is not a tenant id")
        return tuple(sorted(set(value)))

    @model_validator(mode="after")
    def _grants_something(self) -> UserGrant:
        if self.role == "finance" and self.tenants:
            raise ValueError("role finance sees every tenant: give no tenants list")
        if self.role == "tenant" and not self.tenants:
            raise ValueError("list the tenants this user may see, or give role: finance")
        return self


class AccessConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["proxy", "oidc"]
    header: str = DEFAULT_HEADER
    # Proxy mode: the peers whose identity header is believed (None: loopback, unless a secret is
    # configured, which is then the only thing trusted).
    trusted_proxies: tuple[str, ...] | None = None
    proxy_secret_header: str | None = None
    proxy_secret_env: str | None = None
    users: tuple[UserGrant, ...] = Field(min_length=1)

    @field_validator("header", "proxy_secret_header")
    @classmethod
    def _header(cls, value: str | None) -> str | None:
        if value is not None and not _HEADER_NAME.fullmatch(value):
            raise ValueError(f"{value!r} is not an HTTP header name")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("list at least one proxy address, or leave trusted_proxies out")
        networks = []
        for entry in value:
            try:
                networks.append(str(ipaddress.ip_network(entry.strip(), strict=False)))
            except ValueError:
                raise ValueError(
                    f"{entry!r} is not an IP address or CIDR network (e.g. 10.0.0.5, 10.8.0.0/16)"
                ) from None
        return tuple(networks)

    @field_validator("proxy_secret_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.fullmatch(value):
            raise ValueError(
                f"{value!r} is not an environment variable name: name the variable that holds "
                "the secret, never the secret itself"
            )
        return value

    @model_validator(mode="after")
    def _proxy_settings_fit_the_mode(self) -> AccessConfig:
        if (self.proxy_secret_header is None) != (self.proxy_secret_env is None):
            raise ValueError(
                "give proxy_secret_header and proxy_secret_env together (the header the proxy "
                "sets, and the environment variable holding its value)"
            )
        if self.mode == "oidc" and (self.trusted_proxies or self.proxy_secret_header):
            raise ValueError(
                "trusted_proxies and proxy_secret_* belong to mode proxy; mode oidc signs "
                "readers in itself"
            )
        return self

    @property
    def proxy_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        """The peers trusted by address: the list given, else loopback unless a secret is set."""
        if self.trusted_proxies is not None:
            listed = self.trusted_proxies
        else:
            listed = () if self.proxy_secret_header else LOOPBACK
        return tuple(ipaddress.ip_network(entry) for entry in listed)

    def proxy_secret(self, environ: Mapping[str, str]) -> str | None:
        """The shared secret from `environ` (None when none is configured); AccessError when the
        variable the file names is unset or empty (the value is never part of any message)."""
        if self.proxy_secret_env is None:
            return None
        secret = environ.get(self.proxy_secret_env, "")
        if not secret:
            raise AccessError(
                f"proxy_secret_env: the environment variable {self.proxy_secret_env} that holds "
                "the proxy's shared secret is not set"
            )
        return secret

    def trusts(
        self, peer: str | None, headers: Mapping[str, str], environ: Mapping[str, str]
    ) -> bool:
        """Whether a request from `peer` (None: loopback, as Streamlit reports it) with `headers`
        came through the sign-in proxy, so that its identity header may be believed."""
        if self.mode != "proxy":
            return False
        networks = self.proxy_networks
        if self.trusted_proxies is not None or not self.proxy_secret_header:
            try:
                address = ipaddress.ip_address(peer if peer is not None else "127.0.0.1")
            except ValueError:
                return False
            if not any(address in network for network in networks):
                return False
        secret = self.proxy_secret(environ)
        if secret is None:
            return True
        presented = headers.get(self.proxy_secret_header or "") or ""
        return hmac.compare_digest(presented.encode("utf-8"), secret.encode("utf-8"))

    @model_validator(mode="after")
    def _one_entry_per_user(self) -> AccessConfig:
        seen: set[str] = set()
        for index, user in enumerate(self.users):
            if user.email in seen:
                raise ValueError(f"users[{index}]: {user.email} is listed twice")
            seen.add(user.email)
        return self

    def grant(self, identity: str | None) -> Viewer | None:
        """The reader behind `identity`, or None when the file grants them nothing."""
        if not identity:
            return None
        wanted = identity.strip().lower()
        for user in self.users:
            if user.email == wanted:
                return Viewer(user.email, None if user.role == "finance" else user.tenants)
        return None


@dataclass(frozen=True)
class Viewer:
    """A reader of the boards: `tenants` None means every tenant."""

    identity: str
    tenants: tuple[str, ...] | None

    @property
    def scope(self) -> str:
        """A short, stable name of what this reader may see (part of every cache key)."""
        return "all" if self.tenants is None else "t:" + ",".join(self.tenants)


# The operator on this machine, when no access file exists (the boards then bind 127.0.0.1).
LOCAL_OPERATOR = Viewer("local operator", None)


def load_access(path: Path) -> AccessConfig | None:
    """The access file at `path`, or None when there is none; AccessError when it is unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AccessError(f"{path}: cannot be read ({exc.strerror})") from exc
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise AccessError(f"{path}:{where} not valid YAML") from exc
    if not isinstance(document, dict):
        raise AccessError(f"{path}: expected a mapping with mode, header and users")
    try:
        return AccessConfig.model_validate(document)
    except ValidationError as exc:
        raise AccessError(_describe(path, document, exc)) from None


def _describe(path: Path, document: dict, exc: ValidationError) -> str:
    lines = []
    for error in exc.errors():
        location = error["loc"]
        where = ".".join(str(part) for part in location) or "(top)"
        if len(location) >= 2 and location[0] == "users" and isinstance(location[1], int):
            users = document.get("users") or []
            entry = users[location[1]] if location[1] < len(users) else None
            email = entry.get("email") if isinstance(entry, dict) else None
            rest = ".".join(str(part) for part in location[2:])
            where = f"users[{location[1]}]" + (f" ({email})" if email else "")
            where += f".{rest}" if rest else ""
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"{path}: {where}: {message}")
    return "\n".join(lines)
