"""The boards behind sign-in (issue 13, point 2): bound to this machine unless an access file
signs readers in, and each reader sees only the tenants the file grants, in every query.

The multi-reader test runs the real server (`streamlit run`, as `ledger serve` starts it) with an
access file in proxy mode and drives headless Chromium as two readers, whose identity travels in
the proxy's header. On `boards_home` (tests/conftest.py) acme-telecom has two sessions in the
default period (revenue 0.60 + 1.80 = 2.40, cost 0.0144 + 0.6838 = 0.6982) and kiddo-toys one
(revenue 1.60, cost 0.125); together 4.00 and 0.8232.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from ledger.commands.serve import check_access, streamlit_command
from ledger.core.settings import REPO_ROOT, Settings
from ledger.serving.access_file import AccessError, load_access
from tests.support.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    TIMEOUT_MS,
    free_port,
    page_metrics,
    serving,
)

HEADER = "X-Auth-Request-Email"
ACCESS = f"""\
mode: proxy
header: {HEADER}
users:
  - email: ops@acme.example
    tenants: [acme-telecom]
  - email: Toys@Kiddo.example
    tenants: [kiddo-toys]
  - email: cfo@example.com
    role: finance
"""


# ---- the access file -----------------------------------------------------------------------------


def test_the_access_file_grants_each_reader_their_tenants(tmp_path: Path):
    path = tmp_path / "access.yaml"
    path.write_text(ACCESS)
    config = load_access(path)

    assert config.header == HEADER
    assert config.grant("ops@acme.example").tenants == ("acme-telecom",)
    assert config.grant(" toys@kiddo.EXAMPLE ").tenants == ("kiddo-toys",)
    assert config.grant("cfo@example.com").tenants is None  # finance: every tenant
    assert config.grant("eve@example.com") is None
    assert config.grant(None) is None
    assert config.grant("") is None
    assert load_access(tmp_path / "absent.yaml") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "mode: proxy\nusers:\n  - email: a@x.example\n    tenants: [acme]\n"
            "  - email: b@x.example\n",
            "users[1] (b@x.example): list the tenants this user may see, or give role: finance",
        ),
        (
            "mode: proxy\nusers:\n  - email: a@x.example\n    role: finance\n    tenants: [acme]\n",
            "users[0] (a@x.example): role finance sees every tenant: give no tenants list",
        ),
        (
            "mode: proxy\nusers:\n  - email: a@x.example\n    tenants: ['acme telecom']\n",
            "users[0] (a@x.example).tenants: 'acme telecom' is not a tenant id",
        ),
        (
            "mode: basic\nusers:\n  - email: a@x.example\n    role: finance\n",
            "mode: Input should be 'proxy' or 'oidc'",
        ),
        (
            "mode: proxy\nheader: 'X Email'\nusers:\n  - {email: a@x.example, role: finance}\n",
            "header: 'X Email' is not an HTTP header name",
        ),
        (
            "mode: proxy\nusers:\n  - {email: a@x.example, role: finance}\n"
            "  - {email: A@x.example, tenants: [acme]}\n",
            "(top): users[1]: a@x.example is listed twice",
        ),
        ("mode: proxy\nusers: [\n", "line 3 not valid YAML"),
    ],
)
def test_an_unusable_access_file_is_refused_naming_the_file_the_entry_and_the_rule(
    tmp_path: Path, text: str, message: str
):
    path = tmp_path / "access.yaml"
    path.write_text(text)
    with pytest.raises(AccessError) as raised:
        load_access(path)
    assert f"{path}: {message}" in str(raised.value)


# ---- binding -------------------------------------------------------------------------------------


def test_the_boards_bind_this_machine_unless_told_otherwise():
    command = streamlit_command(8501)
    assert command[command.index("--server.address") + 1] == "127.0.0.1"


def test_serving_on_another_address_without_the_access_file_is_refused(tmp_path: Path, monkeypatch):
    from ledger.commands.cli import main

    monkeypatch.setenv("LEDGER_HOME", str(tmp_path))
    monkeypatch.delenv("LEDGER_ACCESS_FILE", raising=False)
    result = CliRunner().invoke(main, ["serve", "--address", "0.0.0.0", "--port", "1"])

    assert result.exit_code == 1
    assert "would be open to the network without sign-in" in result.output
    assert str(tmp_path / "access.yaml") in result.output
    settings = Settings(home=tmp_path, reference_dir=tmp_path)
    assert check_access(settings, "127.0.0.1") is None
    (tmp_path / "access.yaml").write_text(ACCESS)
    assert check_access(settings, "0.0.0.0").mode == "proxy"


# ---- isolation in the connection -----------------------------------------------------------------


def test_a_restricted_reader_s_database_holds_no_row_of_another_tenant(boards_home: Settings):
    """Every table of the reader's private database, whatever its name: only their tenant."""
    from dashboards.connection import SHARED_MARTS, _open_restricted, file_version

    path = boards_home.published_path
    con = _open_restricted(str(path), file_version(path), ("acme-telecom",))
    tables = con.execute(
        "select table_schema, table_name from information_schema.tables order by all"
    ).fetchall()
    columns = {
        (schema, table, column)
        for schema, table, column in con.execute(
            "select table_schema, table_name, column_name from information_schema.columns"
        ).fetchall()
    }
    # The published copy is not reachable from the reader's connection at all.
    databases = con.execute("select database_name from duckdb_databases() order by 1").fetchall()
    assert [name for (name,) in databases] == [
        "memory",
        "system",
        "temp",
    ]
    with duckdb.connect(str(path), read_only=True) as published:
        published_tables = published.execute(
            "select table_schema, table_name from information_schema.tables order by all"
        ).fetchall()
    assert tables == published_tables
    seen_kiddo_elsewhere = 0
    for schema, table in tables:
        if (schema, table, "tenant_id") in columns:
            tenants = {
                tenant
                for (tenant,) in con.execute(
                    f'select distinct tenant_id from {schema}."{table}"'
                ).fetchall()
            }
            assert tenants <= {"acme-telecom"}, (table, tenants)
        elif schema == "marts" and table not in SHARED_MARTS:
            assert con.execute(f'select count(*) from {schema}."{table}"').fetchone() == (0,)
        (mentions,) = con.execute(
            f'select count(*) from {schema}."{table}" as r where r::varchar ilike ?', ["%kiddo%"]
        ).fetchone()
        seen_kiddo_elsewhere += mentions
    assert seen_kiddo_elsewhere == 0
    (revenue,) = con.execute("select sum(revenue) from marts.fct_session_ledger").fetchone()
    assert str(revenue) == "2.400000000000"
    # The publication line counts the reader's own events, not the warehouse's.
    mine = con.execute(
        "select sum(event_count), max(last_event_at) from marts.fct_session_ledger"
    ).fetchone()
    with duckdb.connect(str(path), read_only=True) as published:
        everyone = published.execute("select events from main.publication").fetchone()
    assert con.execute("select events, newest_event_at from main.publication").fetchone() == mine
    assert mine[0] < everyone[0]


# ---- two readers in a real browser ---------------------------------------------------------------


@pytest.fixture
def signed_boards(boards_home: Settings, tmp_path: Path) -> Iterator[str]:
    """`streamlit run dashboards/app.py` as `ledger serve` starts it, with an access file."""
    access = tmp_path / "access.yaml"
    access.write_text(ACCESS)
    settings = boards_home.model_copy(update={"access_file": access})
    # `ledger serve` binds 127.0.0.1 unless told otherwise; `serving` starts it the same way.
    with serving(settings, tmp_path / "streamlit.log") as url:
        yield url


def _overview(browser, url: str, identity: str | None, suffix: str = ""):
    headers = {HEADER: identity} if identity else {}
    context = browser.new_context(
        viewport={"width": 1440, "height": 1100}, extra_http_headers=headers
    )
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{url}{suffix}", wait_until="domcontentloaded")
    return context, page


@pytest.mark.browser
@pytest.mark.usefixtures("boards_chromium")
def test_two_readers_each_see_only_their_tenant_by_any_page_filter_or_url(
    signed_boards: str, tmp_path: Path
):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            # acme's reader: acme's two sessions, whatever the URL asks for.
            context, page = _overview(
                browser,
                signed_boards,
                "ops@acme.example",
                "/?tenant=kiddo-toys&tenant_id=kiddo-toys",
            )
            page.get_by_text("CNY 2.40", exact=True).wait_for()
            shown = page_metrics(page, "Revenue", "Cost", "Sessions")
            assert (shown["Revenue"], shown["Cost"], shown["Sessions"]) == (
                "CNY 2.40",
                "CNY 0.70",
                "2",
            )
            page.get_by_text("Signed in as ops@acme.example: tenants acme-telecom").wait_for()
            # The tenant filter offers acme-telecom only.
            page.locator('[data-testid="stMultiSelect"]').first.click()
            options = page.locator('[role="option"]').all_inner_texts()
            assert options == ["acme-telecom"], options
            page.keyboard.press("Escape")
            # The session explorer, reached by URL: no kiddo session anywhere on it.
            page.goto(f"{signed_boards}/sessions?tenant=kiddo-toys", wait_until="domcontentloaded")
            page.get_by_text("acme-s1").first.wait_for()
            assert "kiddo" not in page.locator("body").inner_text()
            page.screenshot(path=str(tmp_path / "acme.png"), full_page=True)
            context.close()

            # kiddo's reader on the same server at the same time.
            context, page = _overview(browser, signed_boards, "toys@kiddo.example")
            page.get_by_text("CNY 1.60", exact=True).wait_for()
            shown = page_metrics(page, "Revenue", "Cost", "Sessions")
            assert (shown["Revenue"], shown["Cost"], shown["Sessions"]) == (
                "CNY 1.60",
                "CNY 0.12",
                "1",
            )
            context.close()

            # Finance: every tenant.
            context, page = _overview(browser, signed_boards, "cfo@example.com")
            page.get_by_text("CNY 4.00", exact=True).wait_for()
            assert page_metrics(page, "Sessions")["Sessions"] == "3"
            context.close()

            # No identity, or one the file does not name: no figures at all.
            for identity in (None, "eve@example.com"):
                context, page = _overview(browser, signed_boards, identity)
                page.get_by_text("Not signed in").wait_for()
                body = page.locator("body").inner_text()
                assert "CNY" not in body and "acme" not in body and "kiddo" not in body, body
                context.close()
        finally:
            browser.close()


# ---- Streamlit's own sign-in (OIDC): the signed-in user as AppTest seeds it ---------------------


@pytest.fixture
def oidc_boards(boards_home: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    access = tmp_path / "access.yaml"
    access.write_text(ACCESS.replace("mode: proxy", "mode: oidc"))
    monkeypatch.setenv("LEDGER_HOME", str(boards_home.home))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(boards_home.reference_dir))
    monkeypatch.setenv("LEDGER_ACCESS_FILE", str(access))


def _app(user: dict) -> AppTest:
    at = AppTest.from_file(str(REPO_ROOT / "dashboards" / "app.py"), default_timeout=60)
    at.user = user
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.usefixtures("oidc_boards")
def test_oidc_readers_sign_in_and_see_only_their_tenants():
    outside = _app({"is_logged_in": False})
    assert [b.label for b in outside.button] == ["Sign in"]
    assert outside.metric.len == 0

    kiddo = _app({"is_logged_in": True, "email": "toys@kiddo.example"})
    shown = {m.label: m.value for m in kiddo.metric}
    assert (shown["Revenue"], shown["Sessions"]) == ("CNY 1.60", "1")
    assert kiddo.multiselect(key="filter_tenants").options == ["kiddo-toys"]

    finance = _app({"is_logged_in": True, "email": "cfo@example.com"})
    assert {m.label: m.value for m in finance.metric}["Revenue"] == "CNY 4.00"

    stranger = _app({"is_logged_in": True, "email": "eve@example.com"})
    assert "no access" in stranger.error[0].value
    assert stranger.metric.len == 0


def test_oidc_mode_needs_an_auth_section_in_streamlit_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from ledger.commands.serve import ServeRefused

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (tmp_path / "access.yaml").write_text(ACCESS.replace("mode: proxy", "mode: oidc"))
    settings = Settings(home=tmp_path, reference_dir=tmp_path)
    secrets = tmp_path / ".streamlit" / "secrets.toml"
    with pytest.raises(ServeRefused, match=r"needs an \[auth\] section .* in "):
        check_access(settings, "0.0.0.0")

    secrets.parent.mkdir()
    secrets.write_text('[auth]\nredirect_uri = "https://boards.example/oauth2callback"\n')
    with pytest.raises(ServeRefused) as refused:
        check_access(settings, "0.0.0.0")
    assert str(refused.value) == (
        f"{secrets}: [auth] lacks cookie_secret, client_id (in [auth] or an [auth.<provider>] "
        "section) for access mode oidc"
    )

    secrets.write_text(
        '[auth]\nredirect_uri = "https://boards.example/oauth2callback"\n'
        'cookie_secret = "s3cr3t-cookie"\nclient_id = "boards"\nclient_secret = "s3cr3t"\n'
        'server_metadata_url = "https://id.example/.well-known/openid-configuration"\n'
    )
    assert check_access(settings, "0.0.0.0").mode == "oidc"


# ---- fail closed, and the proxy's header believed only from the proxy (issue 26, point 3) ------

SECRET_ENV = "BOARDS_TEST_PROXY_SECRET"
SECRET_HEADER = "X-Proxy-Secret"
# Only the proxy knows it: set in the boards' environment by the tests below, never in the file.
SECRET = "n0t-in-the-file-7c1e"


def _proxied(extra: str) -> str:
    return ACCESS.replace(f"header: {HEADER}\n", f"header: {HEADER}\n{extra}")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "trusted_proxies: [10.0.0.300]\n",
            "trusted_proxies: '10.0.0.300' is not an IP address or CIDR network (e.g. 10.0.0.5, "
            "10.8.0.0/16)",
        ),
        (
            "trusted_proxies: []\n",
            "trusted_proxies: list at least one proxy address, or leave trusted_proxies out",
        ),
        (
            "proxy_secret_header: X-Proxy-Secret\n",
            "(top): give proxy_secret_header and proxy_secret_env together (the header the proxy "
            "sets, and the environment variable holding its value)",
        ),
        (
            "proxy_secret_header: X-Proxy-Secret\nproxy_secret_env: 's3cr3t value!'\n",
            "proxy_secret_env: 's3cr3t value!' is not an environment variable name: name the "
            "variable that holds the secret, never the secret itself",
        ),
        (
            "proxy_secret_header: 'X Secret'\nproxy_secret_env: PROXY_SECRET\n",
            "proxy_secret_header: 'X Secret' is not an HTTP header name",
        ),
    ],
)
def test_proxy_trust_settings_are_refused_naming_the_rule(tmp_path: Path, extra: str, message: str):
    path = tmp_path / "access.yaml"
    path.write_text(_proxied(extra))
    with pytest.raises(AccessError) as raised:
        load_access(path)
    assert str(raised.value) == f"{path}: {message}"


def test_the_identity_header_is_believed_only_from_a_trusted_proxy(tmp_path: Path):
    path = tmp_path / "access.yaml"
    headers = {HEADER: "cfo@example.com"}
    environ = {SECRET_ENV: SECRET}

    # Default: a proxy on this machine (Streamlit reports a loopback peer as None).
    path.write_text(ACCESS)
    config = load_access(path)
    assert [str(n) for n in config.proxy_networks] == ["127.0.0.1/32", "::1/128"]
    assert config.trusts(None, headers, {}) is True
    assert config.trusts("127.0.0.1", headers, {}) is True
    assert config.trusts("::1", headers, {}) is True
    assert config.trusts("192.0.2.7", headers, {}) is False

    # Listed proxies: addresses and networks, and nothing else (loopback neither).
    path.write_text(_proxied("trusted_proxies: [10.255.255.1, '10.8.0.0/16', '2001:db8::/32']\n"))
    config = load_access(path)
    assert config.trusted_proxies == ("10.255.255.1/32", "10.8.0.0/16", "2001:db8::/32")
    assert config.trusts("10.255.255.1", headers, {}) is True
    assert config.trusts("10.8.200.3", headers, {}) is True
    assert config.trusts("2001:db8::5", headers, {}) is True
    assert config.trusts("10.9.0.1", headers, {}) is False
    assert config.trusts(None, headers, {}) is False
    assert config.trusts("not an address", headers, {}) is False

    # A shared secret alone: any peer, with the secret and only with it.
    path.write_text(
        _proxied(f"proxy_secret_header: {SECRET_HEADER}\nproxy_secret_env: {SECRET_ENV}\n")
    )
    config = load_access(path)
    assert config.proxy_networks == ()
    assert config.trusts("198.51.100.4", {**headers, SECRET_HEADER: SECRET}, environ) is True
    assert config.trusts(None, {**headers, SECRET_HEADER: SECRET}, environ) is True
    assert config.trusts(None, {**headers, SECRET_HEADER: SECRET + "x"}, environ) is False
    assert config.trusts(None, headers, environ) is False
    with pytest.raises(AccessError) as raised:
        config.trusts(None, {**headers, SECRET_HEADER: SECRET}, {})
    assert str(raised.value) == (
        f"proxy_secret_env: the environment variable {SECRET_ENV} that holds the proxy's shared "
        "secret is not set"
    )

    # Both: the secret from a listed proxy.
    path.write_text(
        _proxied(
            f"trusted_proxies: [10.255.255.1]\nproxy_secret_header: {SECRET_HEADER}\n"
            f"proxy_secret_env: {SECRET_ENV}\n"
        )
    )
    config = load_access(path)
    assert config.trusts("10.255.255.1", {**headers, SECRET_HEADER: SECRET}, environ) is True
    assert config.trusts("10.255.255.1", headers, environ) is False
    assert config.trusts(None, {**headers, SECRET_HEADER: SECRET}, environ) is False


def test_serve_marks_a_sign_in_deployment_and_refuses_a_proxy_secret_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from ledger.commands.serve import ServeRefused, boards_environment

    settings = Settings(home=tmp_path, reference_dir=tmp_path)
    local = boards_environment(settings)
    assert local["LEDGER_SIGN_IN_REQUIRED"] == "false"
    assert Settings.from_env(local).sign_in_required is False
    # uvicorn must not take the peer address from X-Forwarded-For (any local client writes it).
    assert local["FORWARDED_ALLOW_IPS"] == ""

    (tmp_path / "access.yaml").write_text(ACCESS)
    signed = boards_environment(settings)
    assert signed["LEDGER_SIGN_IN_REQUIRED"] == "true"
    assert Settings.from_env(signed).sign_in_required is True

    (tmp_path / "access.yaml").write_text(
        _proxied(f"proxy_secret_header: {SECRET_HEADER}\nproxy_secret_env: {SECRET_ENV}\n")
    )
    monkeypatch.delenv(SECRET_ENV, raising=False)
    with pytest.raises(ServeRefused) as refused:
        check_access(settings, "0.0.0.0")
    assert str(refused.value) == (
        f"{tmp_path / 'access.yaml'}: proxy_secret_env: the environment variable {SECRET_ENV} "
        "that holds the proxy's shared secret is not set"
    )
    monkeypatch.setenv(SECRET_ENV, SECRET)
    assert check_access(settings, "0.0.0.0").proxy_secret_header == SECRET_HEADER


def _visit(browser, url: str, headers: dict[str, str]):
    context = browser.new_context(
        viewport={"width": 1440, "height": 1100}, extra_http_headers=headers
    )
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url, wait_until="domcontentloaded")
    return context, page


def _finance_sees_everything(browser, url: str, headers: dict[str, str]) -> None:
    context, page = _visit(browser, url, headers)
    page.get_by_text("CNY 4.00", exact=True).wait_for()
    assert page_metrics(page, "Revenue", "Sessions")["Sessions"] == "3"
    context.close()


def _denied(browser, url: str, headers: dict[str, str], reason: str) -> str:
    """The page a denied request gets: `reason` on it, and no figure or tenant."""
    context, page = _visit(browser, url, headers)
    page.get_by_text(reason).wait_for()
    body = page.locator("body").inner_text()
    context.close()
    assert "CNY" not in body and "acme" not in body and "kiddo" not in body, body
    return body


@pytest.fixture
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.usefixtures("boards_chromium")
def test_a_missing_access_file_denies_every_request_until_it_is_restored(
    boards_home: Settings, tmp_path: Path, chromium
):
    access = tmp_path / "access.yaml"
    access.write_text(ACCESS)
    settings = boards_home.model_copy(update={"access_file": access})
    log = tmp_path / "streamlit.log"
    cfo = {HEADER: "cfo@example.com"}
    with serving(settings, log) as url:
        _finance_sees_everything(chromium, url, cfo)

        access.rename(tmp_path / "access.yaml.moved")
        reason = (
            f"The boards are closed: their access file {access} is missing. Every request is "
            "denied until the operator restores it."
        )
        for headers in (cfo, {}):
            _denied(chromium, url, headers, reason)
        assert (
            f"ERROR ledger.boards: access file {access}: is missing; every request to the boards "
            "is denied until it is restored"
        ) in log.read_text()

        (tmp_path / "access.yaml.moved").rename(access)
        _finance_sees_everything(chromium, url, cfo)
        assert (
            f"WARNING ledger.boards: access file {access} is usable again: the boards serve its "
            "readers"
        ) in log.read_text()
    assert log.read_text().count("ERROR ledger.boards") == 1


@pytest.mark.browser
@pytest.mark.usefixtures("boards_chromium")
def test_an_unusable_access_file_denies_every_request_naming_the_fault(
    boards_home: Settings, tmp_path: Path, chromium
):
    access = tmp_path / "access.yaml"
    access.write_text(ACCESS)
    settings = boards_home.model_copy(update={"access_file": access})
    log = tmp_path / "streamlit.log"
    cfo = {HEADER: "cfo@example.com"}
    with serving(settings, log) as url:
        _finance_sees_everything(chromium, url, cfo)

        access.write_text(ACCESS + "  - email: new@example.org\n")
        fault = (
            "users[3] (new@example.org): list the tenants this user may see, or give role: finance"
        )
        _denied(
            chromium,
            url,
            cfo,
            f"The boards are closed: their access file {access} is unusable: {fault}. Every "
            "request is denied until the operator restores it.",
        )
        assert (
            f"ERROR ledger.boards: access file {access}: {fault}; every request to the "
            "boards is denied until it is restored"
        ) in log.read_text()

        access.write_text(ACCESS + "  - email: new@example.org\n    tenants: [acme-telecom]\n")
        _finance_sees_everything(chromium, url, cfo)


@pytest.mark.browser
@pytest.mark.usefixtures("boards_chromium")
def test_the_identity_header_lets_in_only_requests_through_the_proxy(
    boards_home: Settings, tmp_path: Path, chromium, monkeypatch: pytest.MonkeyPatch
):
    access = tmp_path / "access.yaml"
    # The proxy is elsewhere: this machine (the browser's loopback requests) is not it.
    access.write_text(_proxied("trusted_proxies: [10.255.255.1]\n"))
    settings = boards_home.model_copy(update={"access_file": access})
    monkeypatch.setenv(SECRET_ENV, SECRET)  # the boards' environment, as the operator sets it
    cfo = {HEADER: "cfo@example.com"}
    untrusted = "Not signed in: this request did not come through the sign-in proxy"
    with serving(settings, tmp_path / "streamlit.log") as url:
        _denied(chromium, url, cfo, untrusted)
        # Claiming to come from the proxy is no way in either.
        _denied(chromium, url, {**cfo, "X-Forwarded-For": "10.255.255.1"}, untrusted)

        # The proxy adds a shared secret instead: only the secret is trusted.
        access.write_text(
            _proxied(f"proxy_secret_header: {SECRET_HEADER}\nproxy_secret_env: {SECRET_ENV}\n")
        )
        _finance_sees_everything(chromium, url, {**cfo, SECRET_HEADER: SECRET})
        _denied(chromium, url, {**cfo, SECRET_HEADER: SECRET[:-1] + "X"}, untrusted)
        _denied(chromium, url, cfo, untrusted)
    assert SECRET not in (tmp_path / "streamlit.log").read_text()


# ---- Streamlit's own sign-in against a real OpenID Connect provider (issue 26) ------------------


@pytest.fixture
def oidc_provider(tmp_path: Path) -> Iterator[str]:
    """oidc-provider-mock, a real OpenID Connect provider (discovery, authorization with its own
    sign-in form, tokens, userinfo, end of session) on a free loopback port: whoever types an
    e-mail address as subject on its form is signed in with that address as `email` claim."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp_path / "provider.log").open("w")
    provider = subprocess.Popen(
        [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        # Until it answers or exits, however loaded the machine (the per-test timeout bounds it).
        while True:
            try:
                with urllib.request.urlopen(f"{url}/.well-known/openid-configuration") as answer:
                    assert json.load(answer)["issuer"] == url
                    break
            except OSError:
                pass
            if provider.poll() is not None:
                raise RuntimeError(f"the provider did not come up:\n{log.name}")
            time.sleep(0.2)
        yield url
    finally:
        provider.terminate()
        provider.wait(timeout=10)
        log.close()


def _sign_in(page, boards: str, provider: str, email: str) -> None:
    """The boards' Sign in button, the provider's form, and back to the boards."""
    page.goto(boards, wait_until="domcontentloaded")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{provider}/oauth2/authorize?*")
    page.get_by_placeholder("sub").fill(email)
    page.get_by_role("button", name="Authorize", exact=True).click()
    page.wait_for_url(f"{boards}/**")


@pytest.mark.browser
@pytest.mark.usefixtures("boards_chromium")
def test_oidc_readers_sign_in_at_a_real_provider_and_see_only_their_tenants(
    boards_home: Settings,
    tmp_path: Path,
    chromium,
    oidc_provider: str,
    monkeypatch: pytest.MonkeyPatch,
):
    access = tmp_path / "access.yaml"
    access.write_text(ACCESS.replace("mode: proxy", "mode: oidc"))
    settings = boards_home.model_copy(update={"access_file": access})
    port = free_port()
    workdir = tmp_path / "boards"
    (workdir / ".streamlit").mkdir(parents=True)
    (workdir / ".streamlit" / "secrets.toml").write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "boards-test-cookie-secret-0123456789"\n'
        'client_id = "ledger-boards"\n'
        'client_secret = "boards-test-client-secret"\n'
        f'server_metadata_url = "{oidc_provider}/.well-known/openid-configuration"\n'
    )
    # `ledger serve` run from that folder would start: the [auth] section is complete.
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert check_access(settings, "0.0.0.0").mode == "oidc"

    with serving(settings, tmp_path / "streamlit.log", port=port, cwd=workdir) as boards:
        context = chromium.new_context(viewport={"width": 1440, "height": 1100})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)

        # kiddo's reader, signed in by the provider: kiddo's session only.
        _sign_in(page, boards, oidc_provider, "Toys@Kiddo.example")
        page.get_by_text("CNY 1.60", exact=True).wait_for()
        shown = page_metrics(page, "Revenue", "Cost", "Sessions")
        assert (shown["Revenue"], shown["Cost"], shown["Sessions"]) == ("CNY 1.60", "CNY 0.12", "1")
        page.get_by_text("Signed in as toys@kiddo.example: tenants kiddo-toys").wait_for()
        assert "acme" not in page.locator("body").inner_text()

        # Sign-out ends the provider's session too, and the boards ask to sign in again.
        page.get_by_role("button", name="Sign out").click()
        page.wait_for_url(f"{oidc_provider}/oauth2/end_session?*")
        page.get_by_role("button", name="End session").click()
        page.wait_for_url(f"{boards}/**")
        page.get_by_role("button", name="Sign in").wait_for()
        assert "CNY" not in page.locator("body").inner_text()

        # Finance: every tenant.
        _sign_in(page, boards, oidc_provider, "cfo@example.com")
        page.get_by_text("CNY 4.00", exact=True).wait_for()
        assert page_metrics(page, "Sessions")["Sessions"] == "3"
        page.get_by_role("button", name="Sign out").click()
        page.get_by_role("button", name="End session").click()
        page.get_by_role("button", name="Sign in").wait_for()

        # Someone the provider knows but the access file does not: no access, no figures.
        _sign_in(page, boards, oidc_provider, "eve@example.com")
        page.get_by_text("Your account has no access to these boards").wait_for()
        body = page.locator("body").inner_text()
        assert "CNY" not in body and "acme" not in body and "kiddo" not in body, body
        context.close()


def test_local_boards_enforce_an_access_file_written_later_and_a_deployment_never_falls_back(
    boards_home: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    access = tmp_path / "access.yaml"
    monkeypatch.setenv("LEDGER_HOME", str(boards_home.home))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(boards_home.reference_dir))
    monkeypatch.setenv("LEDGER_ACCESS_FILE", str(access))

    # Local mode (no file, started without one): the operator on this machine sees everything.
    monkeypatch.delenv("LEDGER_SIGN_IN_REQUIRED", raising=False)
    local = _app({})
    assert {m.label: m.value for m in local.metric}["Revenue"] == "CNY 4.00"
    # A file written while the boards run is enforced: this request names no reader.
    access.write_text(ACCESS)
    signed = _app({})
    assert signed.metric.len == 0
    assert signed.error[0].value.startswith("Not signed in")

    # A sign-in deployment whose file goes missing: closed, never the local operator.
    access.unlink()
    monkeypatch.setenv("LEDGER_SIGN_IN_REQUIRED", "true")
    closed = _app({})
    assert closed.metric.len == 0
    assert closed.error[0].value == (
        f"The boards are closed: their access file {access} is missing. Every request is denied "
        "until the operator restores it."
    )
