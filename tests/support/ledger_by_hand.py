"""Every session of a built warehouse re-computed by hand with `decimal.Decimal` (an independent,
plain-Python reading of SPEC sections 4 and 5), compared with the export: the ledger tests run it on
DuckDB (tests/pipeline/test_ledger_dbt.py) and on Spark (tests/pipeline/test_spark.py).

The rounding rule the models document and this module mirrors (DuckDB DECIMAL casts round half away
from zero, Python's ROUND_HALF_UP): unit price in the reporting currency = round(unit_price x fx,
20 places); line amount = round(quantity x that, 12 places); revenue = round((fee + billable
seconds x price_per_second) x fx, 12); totals sum 12-place amounts without further rounding.
"""

from __future__ import annotations

import bisect
import csv
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb

from ledger.core.settings import Settings
from ledger.reference import load_reference
from ledger.serving.export import export_session_ledger
from tests.support.homes import LedgerWarehouse

MONEY = Decimal("1E-12")
UNIT_PRICE = Decimal("1E-20")
PERCENT = Decimal("1E-6")

COMPONENTS = ("asr", "llm", "tts", "realtime", "vision", "infra")


def exact_ratio(numerator: Decimal, denominator: Decimal) -> Decimal:
    """numerator / denominator at 20 places, half-even, rounded once (as the reference data)."""
    scaled = round(Fraction(numerator) / Fraction(denominator) * 10**20)
    return Decimal(scaled).scaleb(-20)


def _half_up(value: Decimal, quantum: Decimal) -> Decimal:
    with localcontext() as context:
        context.prec = 80
        return value.quantize(quantum, rounding=ROUND_HALF_UP)


def priced_meter(quantity: str | int, price: str, per: int, fx: Decimal = Decimal(1)) -> Decimal:
    """One meter's amount by the rule above: `quantity` of a rate-card row `price` per `per`,
    converted at `fx`."""
    unit_fx = _half_up(exact_ratio(Decimal(price), Decimal(per)) * fx, UNIT_PRICE)
    return _half_up(Decimal(quantity) * unit_fx, MONEY)


# meter, quantity field, meter whose price the savings are measured against
USAGE_METERS: dict[str, list[tuple[str, str, str | None]]] = {
    "asr.usage": [("asr.audio_seconds", "audio_seconds", None)],
    "llm.usage": [
        ("llm.input_tokens", "input_tokens", None),
        ("llm.cached_input_tokens", "cached_input_tokens", "llm.input_tokens"),
        ("llm.output_tokens", "output_tokens", None),
    ],
    # a token-billed TTS's counts are optional (contract v1.2): a line only where the event has them
    "tts.usage": [
        ("tts.characters", "characters", None),
        ("tts.input_tokens", "input_tokens", None),
        ("tts.output_audio_tokens", "output_audio_tokens", None),
    ],
    "realtime.usage": [
        ("realtime.input_audio_tokens", "input_audio_tokens", None),
        (
            "realtime.cached_input_audio_tokens",
            "cached_input_audio_tokens",
            "realtime.input_audio_tokens",
        ),
        ("realtime.input_text_tokens", "input_text_tokens", None),
        (
            "realtime.cached_input_text_tokens",
            "cached_input_text_tokens",
            "realtime.input_text_tokens",
        ),
        ("realtime.output_audio_tokens", "output_audio_tokens", None),
        ("realtime.output_text_tokens", "output_text_tokens", None),
    ],
    "vision.usage": [("vision.images", "images", None)],
    "infra.usage": [("infra.{unit}", "quantity", None)],
}
TTS_TOKEN_METERS = {"tts.input_tokens", "tts.output_audio_tokens"}
WASTE_METERS = {
    "output": {"llm.output_tokens", "realtime.output_audio_tokens"},
    "tts": {"tts.characters"},
}


@dataclass
class HandSession:
    events: list[dict] = field(default_factory=list)
    costs: dict[str, Decimal] = field(default_factory=lambda: dict.fromkeys(COMPONENTS, Decimal(0)))
    savings: dict[str, Decimal] = field(
        default_factory=lambda: {kind: Decimal(0) for kind in ("llm", "realtime", "tts", "vision")}
    )
    waste: Decimal = Decimal(0)
    unpriced: bool = False


class HandPricer:
    """An independent, plain-Python reading of SPEC sections 4 and 5."""

    def __init__(self, reference_dir: Path, reporting_currency: str) -> None:
        ref = load_reference(reference_dir, reporting_currency)
        self.currency = reporting_currency
        self.rates = defaultdict(list)
        for row in ref.rate_card:
            self.rates[(row.provider, row.model, row.meter)].append(row)
        self.fx: dict[str, list[tuple[date, Decimal]]] = defaultdict(list)
        for row in sorted(ref.fx_rates, key=lambda r: r.rate_date):
            self.fx[row.currency].append((row.rate_date, row.rate))
        self.plans = defaultdict(list)
        for row in ref.price_plans:
            self.plans[row.tenant_id].append(row)

    @staticmethod
    def _in_window(row, moment: datetime) -> bool:
        return row.effective_from <= moment and (
            row.effective_to is None or moment < row.effective_to
        )

    def fx_rate(self, currency: str, day: date) -> Decimal | None:
        if currency == self.currency:
            return Decimal(1)
        rates = self.fx.get(currency, [])
        index = bisect.bisect_right([d for d, _ in rates], day) - 1
        return rates[index][1] if index >= 0 else None

    def unit_price(self, provider: str, model: str, meter: str, moment: datetime) -> Decimal | None:
        """Price per unit in the reporting currency at `moment`, or None when unpriced."""
        rows = [row for row in self.rates[(provider, model, meter)] if self._in_window(row, moment)]
        if not rows:
            return None
        (row,) = rows
        fx = self.fx_rate(row.currency, moment.date())
        if fx is None:
            return None
        return _half_up(exact_ratio(row.price, row.per) * fx, UNIT_PRICE)

    def plan(self, tenant_id: str, moment: datetime):
        rows = [row for row in self.plans.get(tenant_id, []) if self._in_window(row, moment)]
        return rows[0] if rows else None


def _billed_tts_lines(lines: list[tuple]) -> list[tuple]:
    """SPEC 4: a TTS priced per token (a price for a token count > 0 of the event) is billed by its
    tokens, else by its characters; never both."""
    by_tokens = any(m in TTS_TOKEN_METERS and q > 0 and p is not None for m, q, p, _ in lines)
    return [line for line in lines if (line[0] in TTS_TOKEN_METERS) == by_tokens]


def _recompute(events: list[dict], pricer: HandPricer, zone: str) -> dict[str, dict]:
    sessions: dict[str, HandSession] = defaultdict(HandSession)
    output_prices: dict[str, list[tuple]] = defaultdict(list)  # session -> usage candidates
    tts_prices: dict[str, list[tuple]] = defaultdict(list)
    for event in events:
        sessions[event["session_id"]].events.append(event)
        if event["event_type"] not in USAGE_METERS:
            continue
        session = sessions[event["session_id"]]
        component = event["event_type"].split(".")[0]
        model = event["resource"] if component == "infra" else event["model"]
        lines = []
        for meter_pattern, quantity_field, savings_meter in USAGE_METERS[event["event_type"]]:
            if event[quantity_field] is None:
                continue
            meter = meter_pattern.format(unit=event["unit"])
            quantity = Decimal(event[quantity_field])
            price = pricer.unit_price(event["provider"], model, meter, event["occurred_at"])
            lines.append((meter, quantity, price, savings_meter))
            key = (
                event["occurred_at"],
                event["source"],
                event["event_id"],
                event["turn_index"],
                price,
            )
            if meter in WASTE_METERS["output"]:
                output_prices[event["session_id"]].append(key)
            if meter in WASTE_METERS["tts"]:
                tts_prices[event["session_id"]].append(key)
        if component == "tts":
            lines = _billed_tts_lines(lines)
        if any(quantity > 0 and price is None for _, quantity, price, _ in lines):
            session.unpriced = True
            continue
        cache_hit = bool(event.get("cache_hit"))
        for _meter, quantity, price, savings_meter in lines:
            billed = Decimal(0) if cache_hit else quantity
            session.costs[component] += _half_up(billed * (price or 0), MONEY)
            if quantity == 0:
                continue
            if cache_hit:
                session.savings[component] += _half_up(quantity * price, MONEY)
            elif savings_meter is not None:
                full = pricer.unit_price(
                    event["provider"], model, savings_meter, event["occurred_at"]
                )
                if full is not None:  # no full price: nothing to measure the saving against
                    session.savings[component] += _half_up(quantity * (full - price), MONEY)

    def waste_price(candidates: list[tuple], interruption: dict) -> tuple[bool, Decimal | None]:
        same_turn = [c for c in candidates if c[3] == interruption["turn_index"]]
        earlier = [c for c in candidates if c[0] <= interruption["occurred_at"]]
        chosen = max(same_turn or earlier, default=None, key=lambda c: c[:3])
        return chosen is not None, (chosen[4] if chosen else None)

    newest = max(event["occurred_at"] for event in events)
    result = {}
    for session_id, session in sessions.items():
        evs = sorted(session.events, key=lambda e: (e["occurred_at"], e["source"], e["event_id"]))
        starts = [e for e in evs if e["event_type"] == "session.started"]
        ends = [e for e in evs if e["event_type"] == "session.ended"]
        first = starts[0] if starts else evs[0]
        started_at = first["occurred_at"]
        last_at = max(e["occurred_at"] for e in evs)
        if ends:
            ended_at, end_reason = ends[0]["occurred_at"], ends[0]["end_reason"]
        elif last_at < newest - timedelta(hours=2):
            ended_at, end_reason = last_at, "missing_end"
        else:
            ended_at, end_reason = None, None

        for interruption in (e for e in evs if e["event_type"] == "turn.interrupted"):
            amount = Decimal(0)
            for wasted, candidates in (
                (interruption["wasted_output_tokens"], output_prices[session_id]),
                (interruption["wasted_tts_characters"], tts_prices[session_id]),
            ):
                if wasted == 0:
                    continue
                found, price = waste_price(candidates, interruption)
                if not found or price is None:
                    amount = None
                    break
                amount += _half_up(wasted * price, MONEY)
            if amount is None:
                session.unpriced = True
            else:
                session.waste += amount

        total = sum(session.costs.values(), Decimal(0))
        revenue = billable = None
        plan = pricer.plan(first["tenant_id"], started_at)
        if ended_at is not None and plan is not None:
            microseconds = max((ended_at - started_at) // timedelta(microseconds=1), 0)
            step = plan.billing_increment_seconds
            billable = -(-microseconds // (step * 1_000_000)) * step
            per_second = exact_ratio(plan.price_per_minute, Decimal(60))
            fx = pricer.fx_rate(plan.currency, started_at.date())
            revenue = _half_up((plan.per_session_fee + billable * per_second) * fx, MONEY)
        margin = revenue - total if revenue is not None else None
        pct = None
        if revenue:
            pct = _half_up(Decimal(100) * margin / revenue, PERCENT)
        local_start = started_at.replace(tzinfo=ZoneInfo("UTC")).astimezone(ZoneInfo(zone))
        result[session_id] = {
            "tenant_id": first["tenant_id"],
            "scenario": starts[0]["scenario"] if starts else "unknown",
            "started_at": started_at,
            "ended_at": ended_at,
            "end_reason": end_reason,
            "business_date": local_start.date(),
            "billable_seconds": billable,
            "billable_minutes": None
            if billable is None
            else _half_up(Decimal(billable) / 60, MONEY),
            **{f"{component}_cost": session.costs[component] for component in COMPONENTS},
            "total_cost": total,
            "revenue": revenue,
            "gross_margin": margin,
            "gross_margin_pct": pct,
            "interruption_waste_cost": session.waste,
            **{f"{kind}_cache_savings": value for kind, value in session.savings.items()},
            "cache_savings": sum(session.savings.values(), Decimal(0)),
            "has_unpriced_usage": session.unpriced,
            "turn_count": len({e["turn_index"] for e in evs if e["turn_index"] is not None}),
        }
    return result


def _parse_export(row: dict[str, str], expected: dict) -> dict:
    parsed = {}
    for name, value in expected.items():
        text = row[name]
        if text == "":
            parsed[name] = None
        elif isinstance(value, bool):
            parsed[name] = text == "true"
        elif isinstance(value, int):
            parsed[name] = int(text)
        elif isinstance(value, Decimal):
            parsed[name] = Decimal(text)
        elif isinstance(value, datetime):
            parsed[name] = datetime.fromisoformat(text)
        elif isinstance(value, date):
            parsed[name] = date.fromisoformat(text)
        else:
            parsed[name] = text
    return parsed


def recompute_sessions(settings: Settings) -> dict[str, dict]:
    """Every session of the home's `raw.events`, computed by hand: session id -> ledger row."""
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        cursor = con.execute("select * from raw.events")
        names = [column[0] for column in cursor.description]
        events = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    pricer = HandPricer(settings.reference_dir, settings.reporting_currency)
    return _recompute(events, pricer, settings.timezone)


def check_every_session(warehouse: LedgerWarehouse, tmp_path: Path) -> None:
    """The hand computation of every session of `warehouse` equals its exported session ledger."""
    settings = warehouse.settings
    expected = recompute_sessions(settings)

    out = tmp_path / "ledger.csv"
    export_session_ledger(settings, out)
    with out.open(newline="") as handle:
        exported = {row["session_id"]: row for row in csv.DictReader(handle)}

    assert set(exported) == set(expected)
    assert len(expected) > 60  # simulated sessions of four tenants plus the hand-made ones
    mismatches = []
    for session_id, want in expected.items():
        typed_want = {k: v for k, v in want.items() if v is not None}
        got = _parse_export(exported[session_id], typed_want)
        nulls = [k for k, v in want.items() if v is None and exported[session_id][k] != ""]
        if got != typed_want or nulls:
            diff = {k: (got[k], v) for k, v in typed_want.items() if got[k] != v}
            mismatches.append((session_id, diff, nulls))
    assert mismatches == []
    # The hand computation exercised the interesting paths, not only the easy ones.
    assert any(v["has_unpriced_usage"] for v in expected.values())
    assert any(v["end_reason"] == "missing_end" for v in expected.values())
    assert any(v["tts_cache_savings"] > 0 for v in expected.values())
    assert any(v["realtime_cache_savings"] > 0 for v in expected.values())
    assert any(v["interruption_waste_cost"] > 0 for v in expected.values())
