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

In `proxy` mode the header is trusted as it comes: the boards must then be reachable only through
the proxy (bind them to an address only the proxy can reach). Identities compare case-insensitively.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ledger.contract.events import IDENTIFIER_PATTERN

DEFAULT_HEADER = "X-Forwarded-Email"
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
    users: tuple[UserGrant, ...] = Field(min_length=1)

    @field_validator("header")
    @classmethod
    def _header(cls, value: str) -> str:
        if not _HEADER_NAME.fullmatch(value):
            raise ValueError(f"{value!r} is not an HTTP header name")
        return value

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
