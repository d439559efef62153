"""FinOps interop (SPEC 10): the FOCUS export and its validator, rate cards from the genai-prices
catalogue, and the reconciliation of priced usage against a provider bill with its drift alert.

One small simulated warehouse serves every test (`finops_home`): two tenants over eight days,
one session with a model the rate card does not know, and a provider bill that equals the ledger
to the last digit except for aliyun, which raised cosyvoice-v2's price by 12% from DRIFT_DAY on
without the rate card knowing.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ledger.core.settings import REPO_ROOT, Settings
from ledger.warehouse import copy_warehouse

FOCUS_VALIDATOR = REPO_ROOT / ".venv-focus" / "bin" / "focus-validator"
SIMULATION = {"tenants": 2, "days": 8, "start": date(2026, 11, 10), "sessions_per_day": 40}
DRIFT_DAY = date(2026, 11, 14)
# A Saturday: 12% of its small TTS bill is under 1 CNY, so the first day of drift is the 15th.
FIRST_DRIFT_DAY = date(2026, 11, 15)
PRICE_RISE = Decimal("1.12")
# What the provider repriced without the rate card knowing: aliyun cosyvoice-v2 speech.
DRIFT = ("aliyun", "tts", "cosyvoice-v2")
MONEY = Decimal("0.000000000001")
UNPRICED_SESSION = "finops-unpriced"


@dataclass(frozen=True)
class FinopsHome:
    settings: Settings
    bill: Path


def _unpriced_session() -> list[dict]:
    base = {"source": "finops-test", "tenant_id": "acme-telecom", "session_id": UNPRICED_SESSION}
    return [
        {**base, "event_id": "u-0", "event_type": "session.started",
         "occurred_at": datetime(2026, 11, 12, 3, 0), "scenario": "customer_service",
         "channel": "sip", "pipeline": "cascade"},
        {**base, "event_id": "u-1", "event_type": "llm.usage",
         "occurred_at": datetime(2026, 11, 12, 3, 0, 5), "provider": "acme-llm", "model": "x",
         "turn_index": 0, "input_tokens": 120, "cached_input_tokens": 0, "output_tokens": 30},
        {**base, "event_id": "u-2", "event_type": "session.ended",
         "occurred_at": datetime(2026, 11, 12, 3, 1), "end_reason": "user_hangup"},
    ]  # fmt: skip


def _write_bill(settings: Settings, path: Path) -> None:
    """The provider bill: the ledger's own priced cost per UTC day, provider, component and
    model, except DRIFT's model from DRIFT_DAY on, billed 12% higher; plus a platform fee in USD
    for a provider with no metered usage."""
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        rows = con.execute(
            "select usage_date, provider, component, model, sum(amount) "
            "from intermediate.int_usage_lines_priced where is_priced group by all order by all"
        ).fetchall()
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["date", "provider", "component", "model", "item", "amount", "currency"])
        for day, provider, component, model, amount in rows:
            if (provider, component, model) == DRIFT and day >= DRIFT_DAY:
                amount = (amount * PRICE_RISE).quantize(MONEY)
            writer.writerow([day.isoformat(), provider, component, model, "usage", amount, "CNY"])
        writer.writerow(["2026-11-16", "vapi", "infra", "", "platform-fee", "10.00", "USD"])


@pytest.fixture(scope="module")
def finops_home(tmp_path_factory: pytest.TempPathFactory) -> FinopsHome:
    from dagster_project.defs.ledger_dbt import run_dbt
    from ledger.commands.cli import main
    from ledger.ingest import ingest_paths
    from ledger.pipeline.publish import publish
    from ledger.pipeline.transform import prepare_reference
    from ledger.simulate import simulate
    from ledger.warehouse import append_events, connect

    root = tmp_path_factory.mktemp("finops")
    reference = root / "reference"
    shutil.copytree(REPO_ROOT / "data" / "reference", reference)
    settings = Settings(home=root / "home", reference_dir=reference)
    simulate(root / "landing", bad_row_share=0.0, duplicate_share=0.0, **SIMULATION)
    ingest_paths(settings, [root / "landing"], ingest_time=datetime(2027, 1, 1))
    with connect(settings.warehouse_path) as con:
        columns = [r[0] for r in con.execute("describe raw.events").fetchall()]
        append_events(
            con, [{n: v for n, v in event.items() if n in columns} for event in _unpriced_session()]
        )
        prepare_reference(settings, con)
    run_dbt(settings, ["build"])
    bill = root / "aliyun-bill.csv"
    _write_bill(settings, bill)
    result = CliRunner().invoke(
        main,
        ["reconcile", "import", str(bill)],
        env={"LEDGER_HOME": str(settings.home), "LEDGER_REFERENCE_DIR": str(reference)},
    )
    assert result.exit_code == 0, result.output
    run_dbt(settings, ["build", "--select", "int_billed_costs_converted+"])
    publish(settings)
    return FinopsHome(settings, bill)


def _published(settings: Settings, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(settings.published_path), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


# ---- FOCUS ---------------------------------------------------------------------------------------


def focus_failures(data_file: Path, report: Path) -> list[str]:
    """Run the FOCUS validator and read its JUnit report: the names of the failed checks.

    Its exit code is 0 whatever it finds, hence the report. It reads its ISO 4217 list from a
    path relative to the working directory (focus_validator/utils/currency_codes.csv): it runs
    from its own site-packages.
    """
    assert FOCUS_VALIDATOR.exists(), "no FOCUS validator: `make focus-env` installs it"
    (site_packages,) = FOCUS_VALIDATOR.parent.parent.glob("lib/python3*/site-packages")
    completed = subprocess.run(
        [str(FOCUS_VALIDATOR), "--data-file", str(data_file), "--validate-version", "1.0",
         "--output-type", "unittest", "--output-destination", str(report)],
        capture_output=True, text=True, timeout=300, check=False, cwd=site_packages,
    )  # fmt: skip
    assert report.exists(), completed.stdout + completed.stderr
    root = ET.parse(report).getroot()
    # Every rule of FOCUS 1.0 in the validator ran; none was skipped.
    assert (root.get("tests"), root.get("skipped")) == ("133", "0")
    return sorted(
        case.get("name", "")
        for case in root.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    )


@pytest.fixture(scope="module")
def focus_csv(finops_home: FinopsHome, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ledger.commands.cli import main

    out = tmp_path_factory.mktemp("focus") / "charges.csv"
    result = CliRunner().invoke(
        main,
        ["export", "focus", "--out", str(out)],
        env={"LEDGER_HOME": str(finops_home.settings.home),
             "LEDGER_REFERENCE_DIR": str(finops_home.settings.reference_dir)},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def test_the_focus_export_passes_the_focus_validator_and_a_null_billed_cost_fails_it(
    focus_csv: Path, tmp_path: Path
):
    assert focus_failures(focus_csv, tmp_path / "good.xml") == []

    with focus_csv.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[0]["BilledCost"] = ""
    broken = tmp_path / "broken.csv"
    with broken.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    failures = focus_failures(broken, tmp_path / "broken.xml")
    assert failures and all("BilledCost" in name for name in failures), failures


def test_focus_billed_cost_sums_exactly_to_the_ledger_per_tenant_and_day(
    finops_home: FinopsHome, focus_csv: Path
):
    billed: dict[tuple[str, date], Decimal] = defaultdict(Decimal)
    with focus_csv.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        # Plain decimal text with the ledger's 12 places, never a float's exponent.
        for column in ("BilledCost", "EffectiveCost", "ListCost"):
            assert row[column] == row["BilledCost"]
            whole, _, places = row[column].partition(".")
            assert whole.lstrip("-").isdigit() and len(places) == 12, row[column]
        tags = json.loads(row["Tags"])
        assert set(tags) == {"tenant_id", "session_id", "scenario", "pipeline"}
        start = datetime.strptime(row["ChargePeriodStart"], "%Y-%m-%dT%H:%M:%SZ")
        end = datetime.strptime(row["ChargePeriodEnd"], "%Y-%m-%dT%H:%M:%SZ")
        # The business day in Asia/Shanghai (UTC+8), in UTC bounds.
        assert (start.hour, end - start) == (16, timedelta(days=1))
        billed[(tags["tenant_id"], (start + timedelta(hours=8)).date())] += Decimal(
            row["BilledCost"]
        )
        assert row["ChargeCategory"] == "Usage" and row["BillingCurrency"] == "CNY"
        assert "no discounts" in row["ChargeDescription"]
    ledger = {
        (tenant, day): total
        for tenant, day, total in _published(
            finops_home.settings,
            "select tenant_id, business_date, sum(total_cost) from marts.fct_session_ledger "
            "group by all",
        )
    }
    assert len(ledger) >= 2 * 8
    assert dict(billed) == {key: value for key, value in ledger.items() if value != 0}
    categories = {row["ServiceCategory"] for row in rows}
    assert categories == {"AI and Machine Learning", "Networking", "Compute"}


def test_unpriced_usage_is_not_a_charge_but_listed_in_the_sidecar_with_its_quantities(
    focus_csv: Path,
):
    with focus_csv.open(newline="") as handle:
        charged = [json.loads(r["Tags"])["session_id"] for r in csv.DictReader(handle)]
    assert UNPRICED_SESSION not in charged
    sidecar = focus_csv.with_name("charges.unpriced.csv")
    with sidecar.open(newline="") as handle:
        unpriced = [
            (r["session_id"], r["provider"], r["model"], r["meter"], Decimal(r["quantity"]))
            for r in csv.DictReader(handle)
        ]
    assert unpriced == [
        (UNPRICED_SESSION, "acme-llm", "x", "llm.input_tokens", Decimal(120)),
        (UNPRICED_SESSION, "acme-llm", "x", "llm.output_tokens", Decimal(30)),
    ]


def test_the_parquet_export_keeps_exact_decimals_and_utc_instants(
    finops_home: FinopsHome, focus_csv: Path, tmp_path: Path
):
    from ledger.finops.focus import export_focus

    out = tmp_path / "charges.parquet"
    result = export_focus(finops_home.settings, out, date(2026, 11, 15), date(2026, 11, 15))
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        kinds = dict(
            con.execute(f"select column_name, column_type from (describe '{out}')").fetchall()
        )
        (rows, days, billed) = con.execute(
            f"select count(*), count(distinct x_business_date), sum(\"BilledCost\") from '{out}'"
        ).fetchone()
    assert (kinds["BilledCost"], kinds["ChargePeriodStart"]) == (
        "DECIMAL(38,12)",
        "TIMESTAMP WITH TIME ZONE",
    )
    ((ledger,),) = _published(
        finops_home.settings,
        "select sum(total_cost) from marts.fct_session_ledger where business_date = ?",
        [date(2026, 11, 15)],
    )
    assert (rows, days, billed) == (result.charges, 1, ledger)


# ---- rate cards from the catalogue ---------------------------------------------------------------


def test_a_catalogue_price_change_becomes_two_rate_card_windows_per_meter():
    from ledger.finops.genai_prices import PriceWindow, find_model

    # genai-prices: OpenAI cut o3 to $2 / $8 per million on 2025-06-10; cached input stayed $0.5.
    found = find_model("openai", "o3", "llm", date(2025, 6, 1))
    assert found is not None and found.missing_meters == []
    assert found.windows == [
        PriceWindow("llm.input_tokens", Decimal(10), date(2025, 6, 1), date(2025, 6, 10)),
        PriceWindow("llm.input_tokens", Decimal(2), date(2025, 6, 10), None),
        PriceWindow("llm.cached_input_tokens", Decimal("0.5"), date(2025, 6, 1), None),
        PriceWindow("llm.output_tokens", Decimal(40), date(2025, 6, 1), date(2025, 6, 10)),
        PriceWindow("llm.output_tokens", Decimal(8), date(2025, 6, 10), None),
    ]
    # A reseller's listing is not the provider's price: qwen is not a catalogue provider.
    assert find_model("qwen", "qwen-max", "llm", date(2025, 6, 1)) is None


def test_rates_import_proposes_catalogue_prices_for_known_models_and_names_the_others(
    finops_home: FinopsHome, tmp_path: Path
):
    from ledger.finops.rates import (
        apply_proposal,
        describe_proposal,
        propose_rates,
        write_proposal,
    )
    from ledger.reference import load_reference

    reference = tmp_path / "reference"
    shutil.copytree(finops_home.settings.reference_dir, reference)
    settings = finops_home.settings.model_copy(update={"reference_dir": reference})
    proposal = propose_rates(settings, effective_from=date(2026, 12, 1))

    deepseek = [
        (r.meter, r.price, r.per, r.currency, r.effective_from, r.effective_to, r.action)
        for r in proposal.rows
        if r.model == "deepseek-chat"
    ]
    # genai-prices' deepseek-chat list prices (standard hours; the off-peak discount is a
    # time-of-day price, which a rate card cannot hold), USD per million tokens.
    assert deepseek == [
        ("llm.input_tokens", Decimal("0.27"), Decimal(1000000), "USD", date(2026, 12, 1), None,
         "change"),
        ("llm.cached_input_tokens", Decimal("0.07"), Decimal(1000000), "USD", date(2026, 12, 1),
         None, "change"),
        ("llm.output_tokens", Decimal("1.1"), Decimal(1000000), "USD", date(2026, 12, 1), None,
         "change"),
    ]  # fmt: skip
    assert all("time-of-day" in r.note for r in proposal.rows if r.model == "deepseek-chat")
    unknown = {(u.provider, u.model) for u in proposal.unknown}
    assert {("qwen", "qwen-max"), ("qwen", "qwen-turbo")} <= unknown
    assert ("deepseek", "deepseek-chat") not in unknown

    path = tmp_path / "proposal.csv"
    write_proposal(proposal, path)
    # Streamed ASR takes Deepgram's streaming listing, 0.0077 USD a minute as Deepgram publishes
    # it: the rate card's own price, unchanged. The pre-recorded price (deepgram/nova-3, 0.0043)
    # is no price for a voice agent (issue 38 point 2).
    nova_3 = [(r.price, r.per, r.action, r.note) for r in proposal.rows if r.model == "nova-3"]
    assert nova_3 == [
        (
            Decimal("0.0077"),
            Decimal(60),
            "unchanged",
            "LiteLLM 1.110.2 price map model deepgram/streaming/nova-3 (streaming price); the "
            "provider's per-minute price",
        )
    ]
    # Every price the import changes is shown with the catalogue entry it comes from.
    changes = [line for line in describe_proposal(proposal) if line.startswith("change")]
    assert changes[0] == (
        "change    deepseek/deepseek-chat llm.input_tokens: 0.27 USD per 1000000 from 2026-12-01 "
        "to open (rate card now: line 7: 1.6 CNY per 1000000 from 2026-11-16 to open); from "
        "genai-prices 0.2.3 model deepseek-chat; time-of-day pricing: the price in force for most "
        "of the day is proposed"
    )
    assert len(changes) == 3 and all("; from genai-prices 0.2.3 model " in c for c in changes)
    done = apply_proposal(settings, path)
    assert done == [
        "closed rate_card.csv line 7: 1.6 CNY per 1000000 from 2026-11-16 to open on 2026-12-01",
        "added deepseek/deepseek-chat/llm.input_tokens: 0.27 USD per 1000000 from 2026-12-01 "
        "to open",
        "closed rate_card.csv line 5: 0.5 CNY per 1000000 from 2025-01-01 to open on 2026-12-01",
        "added deepseek/deepseek-chat/llm.cached_input_tokens: 0.07 USD per 1000000 from "
        "2026-12-01 to open",
        "closed rate_card.csv line 8: 6 CNY per 1000000 from 2026-11-16 to open on 2026-12-01",
        "added deepseek/deepseek-chat/llm.output_tokens: 1.1 USD per 1000000 from 2026-12-01 "
        "to open",
    ]
    card = load_reference(reference, "CNY").rate_card
    in_force = {
        (r.meter, r.price, r.currency)
        for r in card
        if r.model == "deepseek-chat"
        and r.effective_from <= datetime(2026, 12, 2)
        and (r.effective_to is None or r.effective_to > datetime(2026, 12, 2))
    }
    assert in_force == {
        ("llm.input_tokens", Decimal("0.27"), "USD"),
        ("llm.cached_input_tokens", Decimal("0.07"), "USD"),
        ("llm.output_tokens", Decimal("1.1"), "USD"),
    }
    before = (reference / "rate_card.csv").read_bytes()
    # The same proposal again would overlap the rows it added: refused, nothing written.
    from ledger.finops.rates import RatesError

    with pytest.raises(RatesError, match="overlaps rate_card.csv line"):
        apply_proposal(settings, path)
    assert (reference / "rate_card.csv").read_bytes() == before


def test_rates_check_lists_the_meters_in_use_the_rate_card_does_not_price(
    finops_home: FinopsHome,
):
    from ledger.finops.rates import check_rates

    gaps = [(g.provider, g.model, g.meter, g.usage_events, g.quantity)
            for g in check_rates(finops_home.settings)]  # fmt: skip
    assert gaps == [
        ("acme-llm", "x", "llm.input_tokens", 1, Decimal(120)),
        ("acme-llm", "x", "llm.output_tokens", 1, Decimal(30)),
    ]

    from ledger.commands.cli import main

    result = CliRunner().invoke(
        main,
        ["rates", "check"],
        env={"LEDGER_HOME": str(finops_home.settings.home),
             "LEDGER_REFERENCE_DIR": str(finops_home.settings.reference_dir)},
    )  # fmt: skip
    assert result.exit_code == 1
    assert "unpriced acme-llm/x llm.input_tokens: 1 events, quantity 120.000000" in result.output
    assert "2 meters in use have no price on the rate card" in result.output


# ---- reconciliation ------------------------------------------------------------------------------


def test_reported_costs_are_converted_at_the_fx_rate_of_their_utc_date(finops_home: FinopsHome):
    with duckdb.connect(str(finops_home.settings.warehouse_path), read_only=True) as con:
        fee = con.execute(
            "select reported_amount, reported_currency, fx_rate, amount, currency "
            "from intermediate.int_billed_costs_converted where provider = 'vapi'"
        ).fetchall()
    # fx_rates.csv: 2026-11-16,USD,7.2222 -> 10.00 USD = 72.222 CNY exactly.
    rate = Decimal("7.2222")
    assert fee == [(Decimal("10.000000000000"), "USD", rate, Decimal("72.222000000000"), "CNY")]


def test_the_reconciliation_finds_the_missed_price_rise_and_nothing_else(
    finops_home: FinopsHome,
):
    rows = _published(
        finops_home.settings,
        "select usage_date, provider, component, priced_cost, reported_cost, difference, "
        "difference_pct, is_over_tolerance, top_model from marts.fct_reconciliation_daily "
        "order by usage_date, provider, component",
    )
    drifting = []
    for day, provider, component, priced, reported, difference, pct, over, model in rows:
        assert difference == reported - priced
        if (provider, component) == DRIFT[:2] and day >= DRIFT_DAY:
            assert difference == (priced * PRICE_RISE).quantize(MONEY) - priced
            assert (pct, model) == (Decimal("12.000000"), "cosyvoice-v2")
            # 12% is over the 2% tolerance; a day under 1 CNY of difference is not drift.
            assert over == (difference >= 1)
            if over:
                drifting.append(day)
        else:
            assert (difference, over) == (0, False)
    assert drifting == [FIRST_DRIFT_DAY, date(2026, 11, 16), date(2026, 11, 17)]
    assert {r[1] for r in rows} >= {"deepseek", "qwen", "aliyun", "telco"}


@dataclass
class ListSink:
    channel: str = "list"

    def __post_init__(self) -> None:
        self.payloads: list[dict] = []

    def send(self, payload: dict, key: str) -> int:
        """One try, which lands; `key` is the notification's idempotency key."""
        self.payloads.append(payload)
        return 1


def test_a_missed_price_rise_is_alerted_once_with_its_size_and_the_provider_and_model(
    finops_home: FinopsHome, tmp_path: Path
):
    from ledger.alerts.run import run_alerts

    home = tmp_path / "home"
    home.mkdir()
    copy_warehouse(finops_home.settings.warehouse_path, home / "warehouse.duckdb")
    shutil.copytree(finops_home.settings.published_path.parent, home / "published")
    settings = finops_home.settings.model_copy(update={"home": home})
    (priced,) = [
        r[0]
        for r in _published(
            finops_home.settings,
            "select priced_cost from marts.fct_reconciliation_daily "
            "where usage_date = ? and provider = ? and component = ?",
            [FIRST_DRIFT_DAY, *DRIFT[:2]],
        )
    ]
    sink = ListSink()
    # 12% of the 14th's bill is under the 1 CNY minimum: no alert yet.
    quiet = run_alerts(settings, DRIFT_DAY, sink=sink, now=datetime(2026, 11, 19), echo=None)
    assert quiet.drift is not None and quiet.drift.drifts == []
    first = run_alerts(settings, FIRST_DRIFT_DAY, sink=sink, now=datetime(2026, 11, 19), echo=None)
    drift_texts = [p["text"] for p in sink.payloads if "rate card drift" in p["text"]]
    assert drift_texts == [
        f"[CRITICAL] rate card drift {FIRST_DRIFT_DAY.isoformat()} (UTC day): aliyun tts +12.0% "
        # The deep link: the boards' anomaly inbox on the drift's day (issue 27 point 1).
        f"http://127.0.0.1:8501/anomalies?from={FIRST_DRIFT_DAY}&to={FIRST_DRIFT_DAY}"
    ]
    (message,) = [p for p in sink.payloads if "rate card drift" in p["text"]]
    detail = message["blocks"][1]["text"]["text"]
    rise = (priced * PRICE_RISE).quantize(MONEY) - priced
    shown = f"+{rise.quantize(Decimal('0.01')):,} CNY"
    assert f"Likely stale price: aliyun/cosyvoice-v2 ({shown})" in detail
    assert f"{shown} (12.0% above)" in detail
    assert first.drift is not None and (first.drift.sent, first.drift.suppressed) == (1, 0)

    # The next day the same drift goes on: held by the cooldown, recorded all the same.
    next_day = FIRST_DRIFT_DAY + timedelta(days=1)
    second = run_alerts(settings, next_day, sink=sink, now=datetime(2026, 11, 19), echo=None)
    assert second.drift is not None and (second.drift.sent, second.drift.suppressed) == (0, 1)
    assert len([p for p in sink.payloads if "rate card drift" in p["text"]]) == 1
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        kept = con.execute(
            "select usage_date, provider, component, model, notification "
            "from ops.rate_card_drifts order by usage_date"
        ).fetchall()
    assert kept == [
        (FIRST_DRIFT_DAY, "aliyun", "tts", "cosyvoice-v2", "sent"),
        (next_day, "aliyun", "tts", "cosyvoice-v2", "cooldown"),
    ]


def test_a_bad_bill_is_refused_naming_file_line_and_rule_and_nothing_is_loaded(
    finops_home: FinopsHome, tmp_path: Path
):
    from ledger.finops.provider_costs import import_provider_costs
    from ledger.reference import ReferenceDataError

    bad = tmp_path / "bad-bill.csv"
    bad.write_text(
        "date,provider,component,model,item,amount,currency\n"
        "2026-11-14,deepseek,llm,deepseek-chat,usage,1.5,CNY\n"
        "2026-11-14,deepseek,speech,deepseek-chat,usage,1.5,CNY\n"
        "2026-11-31,deepseek,llm,deepseek-chat,usage,1.5,cny\n"
    )
    with pytest.raises(ReferenceDataError) as caught:
        import_provider_costs(finops_home.settings, bad)
    message = str(caught.value)
    assert "bad-bill.csv line 3 [bad_value]: component 'speech' is not a ledger component" in (
        message
    )
    assert "bad-bill.csv line 4 [bad_date]" in message
    assert "bad-bill.csv line 4 [bad_currency]" in message
    with duckdb.connect(str(finops_home.settings.warehouse_path), read_only=True) as con:
        files = con.execute("select distinct file_name from imports.provider_costs").fetchall()
    assert files == [(finops_home.bill.name,)]


def test_the_weekly_review_has_a_reconciliation_line(finops_home: FinopsHome, tmp_path: Path):
    from ledger.report.review import write_weekly_review

    home = tmp_path / "home"
    home.mkdir()
    copy_warehouse(finops_home.settings.warehouse_path, home / "warehouse.duckdb")
    shutil.copytree(finops_home.settings.published_path.parent, home / "published")
    settings = finops_home.settings.model_copy(update={"home": home})
    result = write_weekly_review(settings, "2026-W46", now=datetime(2026, 11, 19))
    markdown = result.markdown.read_text()
    assert "Reconciliation with provider bills" in markdown
    (days, drifting) = _published(
        finops_home.settings,
        "select count(*), count(*) filter (where is_over_tolerance) "
        "from marts.fct_reconciliation_daily where provider = 'aliyun' and component = 'tts' "
        "and usage_date between '2026-11-09' and '2026-11-15'",
    )[0]
    assert drifting == 1  # 2026-11-15
    aliyun = [line for line in markdown.splitlines() if line.startswith("| aliyun | tts |")]
    assert len(aliyun) == 1 and aliyun[0].endswith(f"| {days} | 1 |"), aliyun


def test_the_data_quality_board_shows_the_reconciliation_with_drifts_first(
    finops_home: FinopsHome, monkeypatch: pytest.MonkeyPatch
):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("LEDGER_HOME", str(finops_home.settings.home))
    monkeypatch.setenv("LEDGER_REFERENCE_DIR", str(finops_home.settings.reference_dir))
    at = AppTest.from_file(str(REPO_ROOT / "dashboards" / "app.py"), default_timeout=60).run()
    at.date_input(key="filter_dates").set_value((date(2026, 11, 10), date(2026, 11, 17))).run()
    at.switch_page("app_pages/data_quality.py").run()
    assert not at.exception, [e.value for e in at.exception]

    (table,) = [d.value for d in at.dataframe if list(d.value.columns)[0] == "Day (UTC)"]
    drifts = table[table["Status"] == "rate card drift"]
    assert [
        (str(day), provider, component, pct, model)
        for day, provider, component, pct, model in drifts[
            ["Day (UTC)", "Provider", "Component", "Difference (%)", "Model most off"]
        ].itertuples(index=False)
    ] == [
        ("2026-11-17", "aliyun", "TTS", 12.0, "cosyvoice-v2"),
        ("2026-11-16", "aliyun", "TTS", 12.0, "cosyvoice-v2"),
        ("2026-11-15", "aliyun", "TTS", 12.0, "cosyvoice-v2"),
    ]
    assert set(table["Status"]) == {"rate card drift", "within tolerance"}
    captions = " ".join(c.value for c in at.caption)
    assert "3 drifting days in the period" in captions
