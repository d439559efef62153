"""Reported costs where they meet usage (issue 38): a `cost.reported` is named like usage (point 1),
and one in a currency without an FX rate is held, not a stopped build (point 7).

One home (`reported_home`), built by the job from the shipped reference data plus Vapi's voice
provider alias `11labs -> elevenlabs`, on 2026-11-20 (USD at 7.2250):

- `spelled-1`: usage named `deepgram`, `elevenlabs`, `api.openai.com` (a host) with reports from
  the same providers spelled `Deepgram`, `ElevenLabs` and `OpenAI`; every line is priced, so
  each group costs its usage and the reports count for nothing.
- `vapi-alias-1`: a Vapi call whose voice entry names `11labs`: its TTS usage and its report
  are one `elevenlabs` group; the call costs what the same call naming `elevenlabs` costs.
- `held-1` (another tenant, its own file `held.jsonl`): two reports in EUR, which fx_rates.csv
  does not list: a PBX fee with no usage (its cost waits on the rate) and a Deepgram report beside
  priced usage (which needs no rate). The build succeeds; both are held and shown by event and
  file, the session counts one unpriced event, and every other figure is as without them.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from ledger.collect.vapi import VapiOptions, events_from_report
from ledger.core.settings import REPO_ROOT, Settings
from tests.support.homes import build_home
from tests.support.ledger_by_hand import priced_meter
from tests.support.stacks import vapi_report

pytestmark = pytest.mark.integration

USD = Decimal("7.2250")  # fx_rates.csv, 2026-11-20
SOURCE = "reported-test"
TENANT = "acme-telecom"


def line(quantity: str | int, price: str, per: int) -> Decimal:
    """One meter priced in USD on 2026-11-20, as the dbt models compute it."""
    return priced_meter(quantity, price, per, USD)


def _event(session_id: str, event_id: str, event_type: str, second: int, **fields) -> dict:
    return {
        "event_id": event_id,
        "source": SOURCE,
        "event_type": event_type,
        "occurred_at": f"2026-11-20T03:00:{second:02d}Z",
        "tenant_id": TENANT,
        "session_id": session_id,
        **fields,
    }


def _spelled_session() -> list[dict]:
    s = "spelled-1"
    return [
        _event(s, "sp-0", "session.started", 0, scenario="customer_service", channel="sip",
               pipeline="cascade"),
        _event(s, "sp-1", "asr.usage", 10, provider="deepgram", model="nova-3",
               audio_seconds="28.9", turn_index=0),
        _event(s, "sp-2", "cost.reported", 11, provider="Deepgram", component="asr",
               model="nova-3", amount="0.003709", currency="USD"),
        _event(s, "sp-3", "llm.usage", 12, provider="api.openai.com",
               model="gpt-4o-mini-2024-07-18", turn_index=0, input_tokens=1000,
               cached_input_tokens=0, output_tokens=100),
        _event(s, "sp-4", "cost.reported", 13, provider="OpenAI", component="llm",
               model="GPT-4o-mini", amount="0.00021", currency="USD"),
        _event(s, "sp-5", "tts.usage", 14, provider="elevenlabs", model="flash-v2.5",
               characters=123, audio_seconds="7.5", turn_index=0),
        _event(s, "sp-6", "cost.reported", 15, provider="ElevenLabs", component="tts",
               model="flash-v2.5", amount="0.00615", currency="USD"),
        _event(s, "sp-7", "session.ended", 59, end_reason="user_hangup"),
    ]  # fmt: skip


def _vapi_with_alias() -> list[dict]:
    report = vapi_report("vapi-alias-1", TENANT)
    for entry in report["message"]["costs"]:
        if entry["type"] == "voice":
            entry["voice"]["provider"] = "11labs"
    return events_from_report(report, VapiOptions(source="vapi", tenant_id=TENANT))


HELD_TENANT = "bright-bank"


def _held_session() -> list[dict]:
    s = "held-1"
    events = [
        _event(s, "held-0", "session.started", 0, scenario="customer_service", channel="sip",
               pipeline="cascade"),
        _event(s, "held-1", "asr.usage", 10, provider="deepgram", model="nova-3",
               audio_seconds="60", turn_index=0),
        _event(s, "held-2", "cost.reported", 20, provider="acme-pbx", component="infra",
               amount="0.30", currency="EUR", item="pbx-fee"),
        _event(s, "held-3", "cost.reported", 21, provider="Deepgram", component="asr",
               model="nova-3", amount="0.0071", currency="EUR"),
        _event(s, "held-4", "session.ended", 50, end_reason="agent_hangup"),
    ]  # fmt: skip
    return [{**e, "tenant_id": HELD_TENANT} for e in events]


def _jsonl(events: list[dict]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def _write_landing(landing: Path) -> None:
    landing.mkdir(parents=True, exist_ok=True)
    (landing / "reported.jsonl").write_text(_jsonl(_spelled_session() + _vapi_with_alias()))
    (landing / "held.jsonl").write_text(_jsonl(_held_session()))


@pytest.fixture(scope="module")
def reported_home(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("reported")
    reference = root / "reference"
    shutil.copytree(REPO_ROOT / "data" / "reference", reference)
    with (reference / "provider_aliases.csv").open("a") as aliases:
        aliases.write("11labs,elevenlabs\n")
    return build_home(root, reference_dir=reference, landing_files=_write_landing)


def _rows(settings: Settings, sql: str) -> list[dict]:
    with duckdb.connect(str(settings.published_path), read_only=True) as con:
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _session(settings: Settings, session_id: str) -> dict:
    (row,) = _rows(
        settings, f"select * from marts.fct_session_ledger where session_id = '{session_id}'"
    )
    return row


# ---- point 1: one provider is one group whatever its spelling -----------------------------------


DEEPGRAM_ASR = line("28.9", "0.0077", 60)
OPENAI_LLM = line(1000, "0.15", 10**6) + line(100, "0.60", 10**6)
ELEVENLABS_TTS = line(123, "0.05", 1000)


def test_a_report_spelled_differently_meets_its_usage_group_and_counts_once(reported_home):
    row = _session(reported_home, "spelled-1")

    assert DEEPGRAM_ASR == Decimal("0.026796320833")
    assert (row["asr_cost"], row["asr_cost_source"]) == (DEEPGRAM_ASR, "usage")
    assert (row["llm_cost"], row["llm_cost_source"]) == (OPENAI_LLM, "usage")
    assert (row["tts_cost"], row["tts_cost_source"]) == (ELEVENLABS_TTS, "usage")
    assert row["total_cost"] == DEEPGRAM_ASR + OPENAI_LLM + ELEVENLABS_TTS
    assert row["total_cost"] == Decimal("0.072747320833")


def test_a_vapi_call_naming_the_11labs_alias_costs_what_the_same_call_naming_elevenlabs_costs(
    reported_home,
):
    row = _session(reported_home, "vapi-alias-1")

    tts = line(1200, "0.05", 1000)
    assert (row["tts_cost"], row["tts_cost_source"]) == (tts, "usage")
    assert tts == Decimal("0.4335")
    asr = line(150, "0.0077", 60)
    llm = line(10000, "0.40", 10**6) + line(20000, "0.10", 10**6) + line(1500, "1.60", 10**6)
    infra = Decimal("0.0215") * USD + Decimal("0.125") * USD  # twilio unpriced; Vapi's fee
    assert row["total_cost"] == asr + llm + tts + infra == Decimal("1.69173375")


def test_reconciliation_compares_reports_with_the_usage_of_the_same_provider_however_spelled(
    reported_home,
):
    rows = _rows(
        reported_home,
        "select usage_date, provider, component, priced_cost, reported_cost, reported_rows, "
        "unconverted_rows from marts.fct_reconciliation_daily "
        "where provider in ('deepgram', 'elevenlabs', 'openai') order by provider",
    )
    # held-1's Deepgram report in EUR is one of deepgram's rows, held (unconverted).
    assert [
        (r["provider"], r["component"], r["reported_rows"], r["unconverted_rows"]) for r in rows
    ] == [
        ("deepgram", "asr", 3, 1),
        ("elevenlabs", "tts", 2, 0),
        ("openai", "llm", 2, 0),
    ]
    costs = {r["provider"]: (r["priced_cost"], r["reported_cost"]) for r in rows}
    vapi_llm = line(10000, "0.40", 10**6) + line(20000, "0.10", 10**6) + line(1500, "1.60", 10**6)
    assert costs == {
        "deepgram": (
            DEEPGRAM_ASR + line(150, "0.0077", 60) + line(60, "0.0077", 60),
            (Decimal("0.003709") + Decimal("0.0193")) * USD,
        ),
        "elevenlabs": (
            ELEVENLABS_TTS + line(1200, "0.05", 1000),
            (Decimal("0.00615") + Decimal("0.078")) * USD,
        ),
        "openai": (OPENAI_LLM + vapi_llm, (Decimal("0.00021") + Decimal("0.0084")) * USD),
    }


# ---- point 7: a report without an FX rate is held, never a stopped build ------------------------


def test_a_report_in_a_currency_without_fx_is_held_and_counted_not_a_stopped_build(reported_home):
    # The fixture's build succeeded (build_home asserts it) with EUR missing from fx_rates.csv.
    row = _session(reported_home, "held-1")

    deepgram = line(60, "0.0077", 60)
    assert (row["asr_cost"], row["asr_cost_source"]) == (deepgram, "usage")
    assert (row["infra_cost"], row["infra_cost_source"]) == (Decimal(0), "unpriced")
    assert row["total_cost"] == deepgram == Decimal("0.0556325")
    assert (row["unpriced_usage_event_count"], row["has_unpriced_usage"]) == (1, True)
    held = _rows(
        reported_home,
        "select tenant_id, session_id, source, event_id, file, line, component, provider, "
        "reported_amount, reported_currency, held_reason "
        "from marts.fct_reported_costs_held order by event_id",
    )
    assert [{**h, "file": Path(h["file"]).name} for h in held] == [
        {
            "tenant_id": HELD_TENANT,
            "session_id": "held-1",
            "source": SOURCE,
            "event_id": event_id,
            "file": "held.jsonl",
            "line": line_number,
            "component": component,
            "provider": provider,
            "reported_amount": amount,
            "reported_currency": "EUR",
            "held_reason": "no_fx_rate",
        }
        for event_id, line_number, component, provider, amount in (
            ("held-2", 3, "infra", "acme-pbx", Decimal("0.30")),
            ("held-3", 4, "asr", "deepgram", Decimal("0.0071")),
        )
    ]


def test_the_data_quality_page_names_each_held_report_by_event_and_file(reported_home, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("LEDGER_HOME", str(reported_home.home))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(reported_home.reference_dir))
    at = AppTest.from_file(str(REPO_ROOT / "dashboards" / "app.py"), default_timeout=60).run()
    at.date_input(key="filter_dates").set_value((date(2026, 11, 20), date(2026, 11, 20))).run()
    at.switch_page("app_pages/data_quality.py").run()
    assert not at.exception, [e.value for e in at.exception]

    (shown,) = [d.value for d in at.dataframe if list(d.value.columns)[0] == "Event id"]
    rows = [
        (event_id, source, Path(file).name, line_number, tenant, component, amount, currency)
        for event_id, source, file, line_number, tenant, component, amount, currency in shown[
            ["Event id", "Source", "File", "Line", "Tenant", "Component", "Amount", "Currency"]
        ].itertuples(index=False)
    ]
    assert rows == [
        ("held-2", SOURCE, "held.jsonl", 3, HELD_TENANT, "Infra", 0.3, "EUR"),
        ("held-3", SOURCE, "held.jsonl", 4, HELD_TENANT, "ASR", 0.0071, "EUR"),
    ]
    # Another tenant's selection does not see them.
    at.multiselect(key="filter_tenants").set_value([TENANT]).run()
    assert not [d for d in at.dataframe if list(d.value.columns)[0] == "Event id"]
