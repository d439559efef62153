"""`ledger rates import|check`: rate-card rows proposed from the price catalogues, reviewed, merged.

LLM and realtime token prices come from genai-prices (ledger.finops.genai_prices); ASR per-second and
TTS per-character prices, and the models genai-prices lacks, from LiteLLM's price map
(ledger.finops.price_map). Models are taken by their rate-card names: the names events carry are
resolved through the alias files first, as pricing resolves them.

    proposal = propose_rates(settings)          # models in use x catalogue, diffed with the card
    write_proposal(proposal, path)              # a CSV a person reviews (and may edit)
    apply_proposal(settings, path)              # merged into rate_card.csv, never silently

A proposed row starts on `effective_from`: by default today (UTC) for a model the rate card
already prices (a catalogue refresh changes prices from now on, it does not restate the past), and
the model's first use for a model it does not price yet (so its history gets priced).

Speech is priced at its class (SPEC 4): the ledger's speech is streamed, so ASR and TTS take the
catalogue's streaming price, and a model the catalogue lists only at its batch price is named, not
re-priced: a class is never swapped silently. Every proposed price names its catalogue entry.

Merging follows SPEC 4's overlap rule: two rows of one (provider, model, meter) must not overlap.
A current row in force when a changed price starts is closed on that date (its `effective_to` is
set), and the merge lists every row it closed and added; a current row that starts on or after the
proposed one is a conflict that only a person can resolve, so the merge refuses and names it. The
merged card is validated by the reference loader before it replaces rate_card.csv.
"""

from __future__ import annotations

import csv
import functools
import io
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb

from ledger.core.durable import write_text_atomically
from ledger.core.settings import Settings
from ledger.finops.genai_prices import (
    CATALOGUE_CURRENCY,
    PER_MILLION,
    catalogue_name,
    find_model,
    today_utc,
)
from ledger.finops.price_map import STREAMING, find_voice_model, load_price_map, price_map_name
from ledger.reference import RateCardRow, ReferenceData, ReferenceDataError, load_reference
from ledger.reference.loader import (
    MODEL_ALIASES_COLUMNS,
    MODEL_ALIASES_FILE,
    PROVIDER_ALIASES_COLUMNS,
    PROVIDER_ALIASES_FILE,
    RATE_CARD_COLUMNS,
    RATE_CARD_FILE,
    REFERENCE_FILES,
)
from ledger.reference.rules import as_csv_instant, exact_ratio

PROPOSAL_COLUMNS: tuple[str, ...] = (*RATE_CARD_COLUMNS, "action", "current", "note")
NEW, CHANGE, UNCHANGED, CONFLICT = "new", "change", "unchanged", "conflict"
APPLIED_ACTIONS = (NEW, CHANGE)
COMPONENT_ORDER = ("asr", "llm", "tts", "realtime")


class RatesError(ValueError):
    """The proposal cannot be merged as it stands; the message names the rows and what to do."""


@dataclass(frozen=True)
class ModelInUse:
    provider: str
    model: str
    component: str
    first_used: date


@dataclass(frozen=True)
class ProposedRow:
    provider: str
    model: str
    meter: str
    price: Decimal
    per: Decimal
    currency: str
    effective_from: date
    effective_to: date | None
    action: str
    current: str
    note: str


@dataclass
class Proposal:
    catalogue: str
    rows: list[ProposedRow] = field(default_factory=list)
    unknown: list[ModelInUse] = field(default_factory=list)
    missing_meters: list[tuple[ModelInUse, str]] = field(default_factory=list)
    # Models the catalogue lists only at another price class than the one they are metered at.
    other_class: list[tuple[ModelInUse, str]] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        result = dict.fromkeys((NEW, CHANGE, UNCHANGED, CONFLICT), 0)
        for row in self.rows:
            result[row.action] += 1
        return result


def _plain(value: Decimal) -> str:
    """A Decimal as plain text, never an exponent: 0.135, 1000000."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _describe(row: RateCardRow) -> str:
    end = as_csv_instant(row.effective_to) if row.effective_to else "open"
    return (
        f"line {row.line_number}: {_plain(row.price)} {row.currency} per {_plain(row.per)} "
        f"from {as_csv_instant(row.effective_from)} to {end}"
    )


def models_in_use(settings: Settings, ref: ReferenceData | None = None) -> list[ModelInUse]:
    """The ASR, LLM, TTS and realtime models in the warehouse's accepted events, by their rate-card
    names (SPEC 4 aliases), each with its first use."""
    if not settings.warehouse_path.exists():
        raise FileNotFoundError(
            f"no warehouse at {settings.warehouse_path}; run `ledger build` first"
        )
    ref = ref or load_reference(settings.reference_dir, settings.reporting_currency)
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        rows = con.execute(
            """
            select provider, model, split_part(event_type, '.', 1) as component,
                cast(min(occurred_at) as date) as first_used
            from raw.events
            where event_type in ('asr.usage', 'llm.usage', 'tts.usage', 'realtime.usage')
            group by all
            """
        ).fetchall()
    first_used: dict[tuple[str, str, str], date] = {}
    for provider, model, component, first in rows:
        resolved = (*ref.resolve_name(provider, model), component)
        first_used[resolved] = min(first, first_used.get(resolved, first))
    order = {component: index for index, component in enumerate(COMPONENT_ORDER)}
    return [
        ModelInUse(provider, model, component, first)
        for (provider, model, component), first in sorted(
            first_used.items(), key=lambda item: (order[item[0][2]], item[0][0], item[0][1])
        )
    ]


def _windows_overlap(start: datetime, end: datetime | None, row: RateCardRow) -> bool:
    return (end is None or row.effective_from < end) and (
        row.effective_to is None or start < row.effective_to
    )


def _classify(
    key: tuple[str, str, str],
    price: Decimal,
    per: Decimal,
    start: date,
    end: date | None,
    card: list[RateCardRow],
) -> tuple[str, str]:
    starts_at = datetime.combine(start, datetime.min.time())
    ends_at = datetime.combine(end, datetime.min.time()) if end else None
    overlapping = [
        r for r in card if (r.provider, r.model, r.meter) == key
        and _windows_overlap(starts_at, ends_at, r)
    ]  # fmt: skip
    if not overlapping:
        return NEW, ""
    current = "; ".join(_describe(r) for r in overlapping)
    if any(r.effective_from >= starts_at for r in overlapping):
        return CONFLICT, current
    if len(overlapping) == 1:
        only = overlapping[0]
        same = (only.unit_price == exact_ratio(price, per)) and only.currency == (
            CATALOGUE_CURRENCY
        )
        if same and only.effective_to is None and end is None:
            return UNCHANGED, current
    return CHANGE, current


def _priced_windows(
    used: ModelInUse, since: date, proposal: Proposal, price_map: Callable[[], dict[str, object]]
) -> tuple[str, list[tuple[str, Decimal, Decimal, date, date | None, str]]] | None:
    """The catalogue rows for a model in use: (source note, [(meter, price, per, from, to,
    note)]), from genai-prices for tokens when it knows the model, else the LiteLLM map."""
    if used.component in ("llm", "realtime"):
        found = find_model(used.provider, used.model, used.component, since)
        if found is not None and found.windows:
            proposal.missing_meters += [(used, meter) for meter in found.missing_meters]
            return f"{catalogue_name()} model {found.catalogue_id}", [
                (w.meter, w.price, PER_MILLION, w.effective_from, w.effective_to, w.note)
                for w in found.windows
            ]
    mapped = find_voice_model(used.provider, used.model, used.component, price_map(), STREAMING)
    if mapped is not None and mapped.other_class is not None:
        proposal.other_class.append((used, mapped.other_class))
        return f"{price_map_name()} model {mapped.map_key}", []
    if mapped is None or not mapped.prices:
        return None
    proposal.missing_meters += [(used, meter) for meter in mapped.missing_meters]
    source = f"{price_map_name()} model {mapped.map_key}"
    if mapped.price_class is not None:
        source += f" ({mapped.price_class} price)"
    return source, [
        (meter, price, per, since, None, note)
        for meter, (price, per, note) in mapped.prices.items()
    ]


def propose_rates(settings: Settings, effective_from: date | None = None) -> Proposal:
    """Rate-card rows for every ASR, LLM, TTS and realtime model in use that a catalogue prices."""
    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    card = list(ref.rate_card)
    proposal = Proposal(f"{catalogue_name()} and the {price_map_name()}")
    # Read once, and only when a model needs it (the settings name the map: LEDGER_PRICE_MAP).
    price_map = functools.cache(lambda: load_price_map(settings.price_map))
    for used in models_in_use(settings, ref):
        priced = any((r.provider, r.model) == (used.provider, used.model) for r in card)
        since = effective_from or (today_utc() if priced else used.first_used)
        found = _priced_windows(used, since, proposal, price_map)
        if found is None:
            proposal.unknown.append(used)
            continue
        source, windows = found
        for meter, price, per, start, end, note in windows:
            key = (used.provider, used.model, meter)
            action, current = _classify(key, price, per, start, end, card)
            proposal.rows.append(
                ProposedRow(
                    provider=used.provider,
                    model=used.model,
                    meter=meter,
                    price=price,
                    per=per,
                    currency=CATALOGUE_CURRENCY,
                    effective_from=start,
                    effective_to=end,
                    action=action,
                    current=current,
                    note="; ".join(filter(None, [source, note])),
                )
            )
    return proposal


def write_proposal(proposal: Proposal, path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PROPOSAL_COLUMNS)
    for row in proposal.rows:
        writer.writerow(
            [
                row.provider,
                row.model,
                row.meter,
                _plain(row.price),
                _plain(row.per),
                row.currency,
                row.effective_from.isoformat(),
                row.effective_to.isoformat() if row.effective_to else "",
                row.action,
                row.current,
                row.note,
            ]
        )
    write_text_atomically(path, buffer.getvalue())


def describe_proposal(proposal: Proposal) -> list[str]:
    """The diff against the current rate card, for a person."""
    lines = []
    for row in proposal.rows:
        end = row.effective_to.isoformat() if row.effective_to else "open"
        text = (
            f"{row.action:9} {row.provider}/{row.model} {row.meter}: {_plain(row.price)} "
            f"{row.currency} per {_plain(row.per)} from {row.effective_from} to {end}"
        )
        if row.current and row.action != UNCHANGED:
            text += f" (rate card now: {row.current})"
        if row.action != UNCHANGED:
            text += f"; from {row.note}"
        lines.append(text)
    for used, meter in proposal.missing_meters:
        lines.append(
            f"no price  {used.provider}/{used.model} {meter}: the catalogue has none; "
            "price it by hand"
        )
    for used, reason in proposal.other_class:
        lines.append(
            f"not taken {used.provider}/{used.model} ({used.component}, streamed): {reason}; "
            "the rate card keeps its price"
        )
    for used in proposal.unknown:
        lines.append(
            f"unknown   {used.provider}/{used.model} ({used.component}): not in "
            f"{proposal.catalogue}; keep pricing it by hand"
        )
    return lines


# ---- apply ---------------------------------------------------------------------------------------


def _read_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        return header, [row for row in reader if any(cell.strip() for cell in row)]


def apply_proposal(settings: Settings, proposal_path: Path) -> list[str]:
    """Merge the `new` and `change` rows of a reviewed proposal into rate_card.csv.

    Returns what was done, one line per closed and added row. Raises `RatesError` on a conflict
    and `ReferenceDataError` when the merged card would not load; rate_card.csv is unchanged then.
    """
    card_path = settings.reference_dir / RATE_CARD_FILE
    header, proposal_rows = _read_rows(Path(proposal_path))
    missing = [c for c in PROPOSAL_COLUMNS if c not in header]
    if missing:
        raise RatesError(
            f"{proposal_path} is not a rate proposal: missing columns {', '.join(missing)}; "
            "write one with `ledger rates import`"
        )
    proposed = [dict(zip(header, row, strict=False)) for row in proposal_rows]
    card_header, card_rows = _read_rows(card_path)
    card = list(load_reference(settings.reference_dir, settings.reporting_currency).rate_card)
    # Rate card rows by CSV line (the header is line 1); blank rows were skipped by both readers.
    by_line = {row.line_number: index for index, row in enumerate(card)}
    column = {name: card_header.index(name) for name in RATE_CARD_COLUMNS}
    done: list[str] = []
    additions: list[list[str]] = []
    for number, row in enumerate(proposed, start=2):
        if row["action"] not in APPLIED_ACTIONS:
            continue
        key = (row["provider"], row["model"], row["meter"])
        start = datetime.fromisoformat(row["effective_from"])
        end = datetime.fromisoformat(row["effective_to"]) if row["effective_to"] else None
        for index, current in enumerate(card):
            if (current.provider, current.model, current.meter) != key:
                continue
            if not _windows_overlap(start, end, current):
                continue
            if current.effective_from >= start or (
                end is not None and (current.effective_to is None or current.effective_to > end)
            ):
                raise RatesError(
                    f"{proposal_path} line {number} ({'/'.join(key)} from "
                    f"{row['effective_from']}) overlaps {RATE_CARD_FILE} {_describe(current)}, "
                    "which closing it cannot resolve; edit the rate card or the proposal by hand"
                )
            cells = card_rows[by_line[current.line_number]]
            cells[column["effective_to"]] = row["effective_from"]
            # Later windows of the same key see the row as now closed.
            card[index] = current.model_copy(update={"effective_to": start})
            done.append(f"closed {RATE_CARD_FILE} {_describe(current)} on {row['effective_from']}")
        cells = [""] * len(card_header)
        for name in RATE_CARD_COLUMNS:
            cells[column[name]] = row[name]
        additions.append(cells)
        done.append(
            f"added {'/'.join(key)}: {row['price']} {row['currency']} per {row['per']} from "
            f"{row['effective_from']} to {row['effective_to'] or 'open'}"
        )
    if not additions:
        return ["nothing to apply: the proposal has no `new` or `change` rows"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(card_header)
    writer.writerows(card_rows + additions)
    _check_merged(settings, buffer.getvalue())
    write_text_atomically(card_path, buffer.getvalue())
    return done


def _check_merged(settings: Settings, rate_card_text: str) -> None:
    """Load the merged rate card with the other reference files, in a scratch folder."""
    with tempfile.TemporaryDirectory() as scratch:
        for name in REFERENCE_FILES:
            source = settings.reference_dir / name
            if source.exists():
                shutil.copy(source, Path(scratch) / name)
        (Path(scratch) / RATE_CARD_FILE).write_text(rate_card_text, encoding="utf-8")
        try:
            load_reference(Path(scratch), settings.reporting_currency)
        except ReferenceDataError as exc:
            raise ReferenceDataError(settings.reference_dir, exc.problems) from None


# ---- check ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnpricedMeter:
    provider: str  # the rate card's names, once resolved through the aliases (SPEC 4)
    model: str
    meter: str
    usage_events: int
    quantity: Decimal
    first_seen: datetime
    last_seen: datetime
    seen_provider: str  # the names as the events carry them
    seen_model: str


@dataclass(frozen=True)
class AliasProposal:
    """A row for provider_aliases.csv or model_aliases.csv that would price a gap."""

    file: str
    row: tuple[str, ...]
    reason: str


# Model name endings that name a variant priced like its base model (SPEC 4 model aliases): a
# dated snapshot (`gpt-4o-mini-2024-07-18`, `-20241217`), Deepgram's `-general`, `-latest`.
_MODEL_SUFFIXES = (
    re.compile(r"-\d{4}-\d{2}-\d{2}$"),
    re.compile(r"-\d{8}$"),
    re.compile(r"-general$"),
    re.compile(r"-latest$"),
)


def check_rates(settings: Settings) -> list[UnpricedMeter]:
    """Meters in use (quantity > 0) that the current reference files leave without a price, the
    names resolved through the current alias files as pricing resolves them."""
    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        found = con.execute(
            "select count(*) from information_schema.tables where table_schema = 'intermediate' "
            "and table_name = 'int_usage_lines_unpivoted'"
        ).fetchone()[0]
        if not found:
            raise LookupError(
                f"{settings.warehouse_path} has no usage lines yet; run `ledger build` first"
            )
        con.execute(
            "create temp table rate_card (provider varchar, model varchar, meter varchar, "
            "effective_from timestamp, effective_to timestamp)"
        )
        con.executemany(
            "insert into rate_card values (?, ?, ?, ?, ?)",
            [
                [r.provider, r.model, r.meter, r.effective_from, r.effective_to]
                for r in ref.rate_card
            ],
        )
        seen = con.execute(
            "select distinct provider, model from intermediate.int_usage_lines_unpivoted"
        ).fetchall()
        con.execute(
            "create temp table names (seen_provider varchar, seen_model varchar, "
            "provider varchar, model varchar)"
        )
        con.executemany(
            "insert into names values (?, ?, ?, ?)",
            [[p, m, *ref.resolve_name(p, m)] for p, m in seen],
        )
        rows = con.execute(
            """
            select names.provider, names.model, meter,
                count(distinct source || chr(31) || event_id), sum(quantity),
                min(occurred_at), max(occurred_at), names.seen_provider, names.seen_model
            from intermediate.int_usage_lines_unpivoted as usage_lines
            inner join names
                on usage_lines.provider = names.seen_provider
                and usage_lines.model = names.seen_model
            where quantity > 0 and not exists (
                select 1 from rate_card
                where rate_card.provider = names.provider
                    and rate_card.model = names.model
                    and rate_card.meter = usage_lines.meter
                    and usage_lines.occurred_at >= rate_card.effective_from
                    and (rate_card.effective_to is null
                         or usage_lines.occurred_at < rate_card.effective_to)
            )
            group by all
            order by names.provider, names.model, meter, names.seen_provider, names.seen_model
            """
        ).fetchall()
    return [UnpricedMeter(*row) for row in rows]


def propose_aliases(settings: Settings, gaps: list[UnpricedMeter]) -> list[AliasProposal]:
    """Alias rows that would give the gaps a rate-card name pricing their meter:

    - provider: a host one of whose dot-separated labels is a rate-card provider
      (`eu.api.openai.com` -> openai), or a name equal to one but for case and punctuation
      (`Eleven-Labs` -> elevenlabs);
    - model: of a rate-card provider, a model that is a rate-card model but for a known ending
      (a date, `-general`, `-latest`) or for case and punctuation.
    Only a target that prices the gap's meter is proposed; nothing is written.
    """
    ref = load_reference(settings.reference_dir, settings.reporting_currency)
    priced: dict[str, set[str]] = {}
    for row in ref.rate_card:
        priced.setdefault(row.provider, set()).add(row.meter)
    models: dict[tuple[str, str], set[str]] = {}
    for row in ref.rate_card:
        models.setdefault((row.provider, row.model), set()).add(row.meter)
    proposals: dict[tuple[str, tuple[str, ...]], AliasProposal] = {}

    def squash(name: str) -> str:
        return re.sub(r"[^a-z0-9]", "", name.lower())

    for gap in gaps:
        provider, model = gap.provider, gap.model
        if provider not in priced:
            labels = [label for label in provider.lower().split(".") if label]
            by_label = sorted({p for p in priced if p.lower() in labels} if len(labels) > 1 else ())
            by_squash = sorted(p for p in priced if squash(p) == squash(provider))
            candidates = by_label or by_squash
            if len(candidates) != 1:
                continue
            target = candidates[0]
            reason = (
                "a label of the host" if by_label else "the same name but for case and punctuation"
            )
            proposal = AliasProposal(
                PROVIDER_ALIASES_FILE, (provider, target), f"{provider}: {reason} is {target}"
            )
            proposals.setdefault((proposal.file, proposal.row), proposal)
            # Under the proposed provider, its model aliases apply as pricing would apply them.
            provider, model = ref.resolve_name(target, model)
            if (provider, model) in models and gap.meter in models[provider, model]:
                continue
        if (provider, model) in models:
            continue
        stripped = {pattern.sub("", model) for pattern in _MODEL_SUFFIXES} - {model}
        by_suffix = sorted(
            m for (p, m) in models if p == provider and m.lower() in {s.lower() for s in stripped}
        )
        by_squash_model = sorted(
            m for (p, m) in models if p == provider and squash(m) == squash(model)
        )
        candidates = by_suffix or by_squash_model
        if len(candidates) != 1 or gap.meter not in models[provider, candidates[0]]:
            continue
        target = candidates[0]
        reason = (
            "a variant by its ending" if by_suffix else "the same name but for case and punctuation"
        )
        proposal = AliasProposal(
            MODEL_ALIASES_FILE,
            (provider, model, target),
            f"{provider} {model}: {reason} of {target}",
        )
        proposals.setdefault((proposal.file, proposal.row), proposal)
    return sorted(proposals.values(), key=lambda p: (p.file != PROVIDER_ALIASES_FILE, p.row))


def alias_csv_lines(proposals: list[AliasProposal]) -> list[str]:
    """The proposals as CSV rows under their file's header, ready to paste."""
    lines: list[str] = []
    for file, columns in (
        (PROVIDER_ALIASES_FILE, PROVIDER_ALIASES_COLUMNS),
        (MODEL_ALIASES_FILE, MODEL_ALIASES_COLUMNS),
    ):
        rows = [p.row for p in proposals if p.file == file]
        if not rows:
            continue
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerows(rows)
        lines += [f"# {file} ({','.join(columns)})", *buffer.getvalue().splitlines()]
    return lines
