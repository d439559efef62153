"""`load_reference`: read, validate and cross-check the reference files (SPEC section 4).

Rules that span rows or files live here: overlapping validity windows (rate card per
(provider, model, meter), price plans per tenant), duplicate FX rows, an FX row for the reporting
currency that is not 1, and a currency in use with no FX rows at all. Names are matched
case-insensitively (SPEC 4), so two rate-card spellings of one name, an alias given twice, and an
alias whose target is itself an alias are refused. Every problem of every file is collected
before `ReferenceDataError` is raised.

The alias files (`provider_aliases.csv`, `model_aliases.csv`) are optional: a reference directory
made before they existed loads with no aliases.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Hashable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from ledger.reference.csv_files import read_csv
from ledger.reference.errors import Problem, ReferenceDataError
from ledger.reference.latency import load_latency_budgets
from ledger.reference.models import (
    FxRateRow,
    ModelAliasRow,
    PricePlanRow,
    ProviderAliasRow,
    RateCardRow,
    ReferenceData,
    SpendBudgetRow,
)
from ledger.reference.rules import as_csv_instant, show_instant

RATE_CARD_FILE = "rate_card.csv"
FX_RATES_FILE = "fx_rates.csv"
PRICE_PLANS_FILE = "price_plans.csv"
LATENCY_BUDGETS_FILE = "latency_budgets.yaml"
PROVIDER_ALIASES_FILE = "provider_aliases.csv"
MODEL_ALIASES_FILE = "model_aliases.csv"
SPEND_BUDGETS_FILE = "spend_budgets.csv"
REQUIRED_FILES: tuple[str, ...] = (
    RATE_CARD_FILE,
    FX_RATES_FILE,
    PRICE_PLANS_FILE,
    LATENCY_BUDGETS_FILE,
)
OPTIONAL_FILES: tuple[str, ...] = (PROVIDER_ALIASES_FILE, MODEL_ALIASES_FILE, SPEND_BUDGETS_FILE)
REFERENCE_FILES: tuple[str, ...] = (*REQUIRED_FILES, *OPTIONAL_FILES)

RATE_CARD_COLUMNS: tuple[str, ...] = (
    "provider",
    "model",
    "meter",
    "price",
    "per",
    "currency",
    "effective_from",
    "effective_to",
)
FX_RATES_COLUMNS: tuple[str, ...] = ("date", "currency", "rate")
PRICE_PLANS_COLUMNS: tuple[str, ...] = (
    "tenant_id",
    "price_per_minute",
    "per_session_fee",
    "billing_increment_seconds",
    "currency",
    "effective_from",
    "effective_to",
)
PROVIDER_ALIASES_COLUMNS: tuple[str, ...] = ("seen", "provider")
MODEL_ALIASES_COLUMNS: tuple[str, ...] = ("provider", "seen", "model")
SPEND_BUDGETS_COLUMNS: tuple[str, ...] = ("tenant_id", "month", "amount", "currency", "provider")


def load_reference(reference_dir: Path, reporting_currency: str = "CNY") -> ReferenceData:
    """Load and validate the reference files in `reference_dir`.

    Raises `ReferenceDataError` listing every problem (file, line, rule, what to do).
    """
    reference_dir = Path(reference_dir)
    if not re.fullmatch(r"[A-Z]{3}", reporting_currency):
        raise ValueError(
            "the reporting currency must be a 3-letter upper-case ISO code such as CNY, got "
            f"{reporting_currency!r}; check LEDGER_REPORTING_CURRENCY"
        )
    problems: list[Problem] = []
    contents: dict[str, bytes] = {}
    for name in REFERENCE_FILES:
        path = reference_dir / name
        try:
            contents[name] = path.read_bytes()
        except FileNotFoundError:
            if name in OPTIONAL_FILES:
                continue
            problems.append(
                Problem(
                    name,
                    None,
                    "missing_file",
                    f"{path} does not exist; restore it from the repository (data/reference/) "
                    "or point LEDGER_REFERENCE_DIR at a directory that holds all four files",
                )
            )

    rate_card = read_csv(
        RATE_CARD_FILE, contents.get(RATE_CARD_FILE, b""), RATE_CARD_COLUMNS, RateCardRow
    )
    fx = read_csv(
        FX_RATES_FILE,
        contents.get(FX_RATES_FILE, b""),
        FX_RATES_COLUMNS,
        FxRateRow,
        field_of_column={"date": "rate_date"},
    )
    plans = read_csv(
        PRICE_PLANS_FILE, contents.get(PRICE_PLANS_FILE, b""), PRICE_PLANS_COLUMNS, PricePlanRow
    )
    provider_aliases = read_csv(
        PROVIDER_ALIASES_FILE,
        contents.get(PROVIDER_ALIASES_FILE, b"seen,provider\n"),
        PROVIDER_ALIASES_COLUMNS,
        ProviderAliasRow,
    )
    model_aliases = read_csv(
        MODEL_ALIASES_FILE,
        contents.get(MODEL_ALIASES_FILE, b"provider,seen,model\n"),
        MODEL_ALIASES_COLUMNS,
        ModelAliasRow,
    )
    spend_budgets = read_csv(
        SPEND_BUDGETS_FILE,
        _with_provider_column(
            contents.get(SPEND_BUDGETS_FILE, b"tenant_id,month,amount,currency\n")
        ),
        SPEND_BUDGETS_COLUMNS,
        SpendBudgetRow,
    )
    csv_results = (
        (RATE_CARD_FILE, rate_card),
        (FX_RATES_FILE, fx),
        (PRICE_PLANS_FILE, plans),
        (PROVIDER_ALIASES_FILE, provider_aliases),
        (MODEL_ALIASES_FILE, model_aliases),
        (SPEND_BUDGETS_FILE, spend_budgets),
    )
    for name, result in csv_results:
        if name in contents:  # a missing file is one problem, not also a missing header
            problems += result.problems

    problems += _overlaps(
        RATE_CARD_FILE,
        rate_card.rows,
        key=lambda row: row.key,
        describe=lambda row: f"({row.provider}, {row.model}, {row.meter})",
    )
    problems += _overlaps(
        PRICE_PLANS_FILE,
        plans.rows,
        key=lambda row: row.tenant_id,
        describe=lambda row: f"tenant {row.tenant_id}",
    )
    problems += _name_problems(rate_card.rows, provider_aliases.rows, model_aliases.rows)
    problems += _spend_budget_problems(spend_budgets.rows)
    problems += _fx_problems(fx.rows, reporting_currency)
    if fx.readable:
        fx_currencies = {cells["currency"] for _, cells in fx.raw_rows}
        problems += _missing_fx(
            [
                (RATE_CARD_FILE, rate_card.rows),
                (PRICE_PLANS_FILE, plans.rows),
                (SPEND_BUDGETS_FILE, spend_budgets.rows),
            ],
            fx_currencies,
            reporting_currency,
        )

    latency_spec, latency_rows = None, ()
    if LATENCY_BUDGETS_FILE in contents:
        latency_spec, latency_rows, latency_problems = load_latency_budgets(
            LATENCY_BUDGETS_FILE, contents[LATENCY_BUDGETS_FILE]
        )
        problems += latency_problems

    if problems:
        order = {name: index for index, name in enumerate(REFERENCE_FILES)}
        problems.sort(key=lambda problem: (order[problem.file], problem.first_line))
        raise ReferenceDataError(reference_dir, problems)
    assert latency_spec is not None
    return ReferenceData(
        reference_dir=reference_dir.resolve(),
        reporting_currency=reporting_currency,
        loaded_at=datetime.now(UTC).replace(tzinfo=None),
        content_sha256=content_sha256(contents),
        rate_card=tuple(rate_card.rows),
        fx_rates=tuple(fx.rows),
        price_plans=tuple(plans.rows),
        latency_spec=latency_spec,
        latency_budgets=latency_rows,
        provider_aliases=tuple(provider_aliases.rows),
        model_aliases=tuple(model_aliases.rows),
        spend_budgets=tuple(spend_budgets.rows),
    )


def content_sha256(contents: dict[str, bytes]) -> str:
    """One hash over the files' names and bytes: equal hashes, equal reference data. An absent
    optional file leaves the hash as it was before that file existed."""
    digest = hashlib.sha256()
    for name in REFERENCE_FILES:
        if name not in contents:
            continue
        data = contents[name]
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _name_problems(
    card: Sequence[RateCardRow],
    provider_aliases: Sequence[ProviderAliasRow],
    model_aliases: Sequence[ModelAliasRow],
) -> list[Problem]:
    """Names match case-insensitively (SPEC 4): each must have one meaning."""
    problems: list[Problem] = []
    spelled: dict[tuple[str, ...], RateCardRow] = {}
    for row in card:
        for key, name, what in (
            ((row.provider.lower(),), row.provider, f"provider {row.provider}"),
            ((row.provider, row.model.lower()), row.model, f"model {row.model} of {row.provider}"),
        ):
            first = spelled.setdefault(key, row)
            shown = first.provider if len(key) == 1 else first.model
            if shown != name:
                problems.append(
                    Problem(
                        RATE_CARD_FILE,
                        row.line_number,
                        "ambiguous_name",
                        f"{what} differs from line {first.line_number}'s {shown} only in case; "
                        "names match case-insensitively, so spell both the same",
                        other_line=first.line_number,
                    )
                )
    seen_providers: dict[str, ProviderAliasRow] = {}
    for alias in provider_aliases:
        first_alias = seen_providers.setdefault(alias.seen.lower(), alias)
        if first_alias is not alias:
            problems.append(
                Problem(
                    PROVIDER_ALIASES_FILE,
                    alias.line_number,
                    "duplicate_alias",
                    f"lines {first_alias.line_number} and {alias.line_number} both map "
                    f"{alias.seen} (names match case-insensitively); keep one",
                    other_line=first_alias.line_number,
                )
            )
    for alias in provider_aliases:
        target = seen_providers.get(alias.provider.lower())
        if target is not None and target.provider != alias.provider:
            problems.append(
                Problem(
                    PROVIDER_ALIASES_FILE,
                    alias.line_number,
                    "alias_chain",
                    f"{alias.provider} is itself an alias (line {target.line_number}, of "
                    f"{target.provider}); map {alias.seen} to {target.provider} directly",
                    other_line=target.line_number,
                )
            )
    seen_models: dict[tuple[str, str], ModelAliasRow] = {}
    for alias in model_aliases:
        first_model = seen_models.setdefault((alias.provider, alias.seen.lower()), alias)
        if first_model is not alias:
            problems.append(
                Problem(
                    MODEL_ALIASES_FILE,
                    alias.line_number,
                    "duplicate_alias",
                    f"lines {first_model.line_number} and {alias.line_number} both map "
                    f"{alias.provider} model {alias.seen} (names match case-insensitively); "
                    "keep one",
                    other_line=first_model.line_number,
                )
            )
    for alias in model_aliases:
        target_model = seen_models.get((alias.provider, alias.model.lower()))
        if target_model is not None and target_model.model != alias.model:
            problems.append(
                Problem(
                    MODEL_ALIASES_FILE,
                    alias.line_number,
                    "alias_chain",
                    f"{alias.provider} model {alias.model} is itself an alias (line "
                    f"{target_model.line_number}, of {target_model.model}); map {alias.seen} to "
                    f"{target_model.model} directly",
                    other_line=target_model.line_number,
                )
            )
        gateway = seen_providers.get(alias.provider.lower())
        if gateway is not None and gateway.provider != alias.provider:
            problems.append(
                Problem(
                    MODEL_ALIASES_FILE,
                    alias.line_number,
                    "alias_chain",
                    f"{alias.provider} is a provider alias ({PROVIDER_ALIASES_FILE} line "
                    f"{gateway.line_number}); name the provider it maps to, {gateway.provider}",
                )
            )
    return problems


WindowedRowT = TypeVar("WindowedRowT", RateCardRow, PricePlanRow)


def _overlaps(
    file_name: str,
    rows: Sequence[WindowedRowT],
    key: Callable[[WindowedRowT], Hashable],
    describe: Callable[[WindowedRowT], str],
) -> list[Problem]:
    groups: dict[Hashable, list[WindowedRowT]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    problems = []
    for group in groups.values():
        group.sort(key=lambda row: (row.effective_from, row.line_number))
        for index, first in enumerate(group):
            for second in group[index + 1 :]:
                if not first.overlaps(second):
                    continue
                if second.effective_from > first.effective_from:
                    fix = (
                        f"end line {first.line_number} where line {second.line_number} starts "
                        f"(effective_to {as_csv_instant(second.effective_from)}), or delete "
                        "one of the rows"
                    )
                else:
                    fix = "both start at the same time: delete one of the rows"
                problems.append(
                    Problem(
                        file_name,
                        second.line_number,
                        "overlapping_windows",
                        f"lines {first.line_number} and {second.line_number} both apply to "
                        f"{describe(first)} from {show_instant(second.effective_from)} "
                        f"([{show_instant(first.effective_from)}, "
                        f"{show_instant(first.effective_to)}) overlaps "
                        f"[{show_instant(second.effective_from)}, "
                        f"{show_instant(second.effective_to)})); {fix}",
                        other_line=first.line_number,
                    )
                )
    return problems


def _with_provider_column(data: bytes) -> bytes:
    """`provider` is an optional column of spend_budgets.csv (SPEC 4): a file without it budgets
    each tenant's whole spend, so it is read as if the column were there and empty."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data  # read_csv names the encoding problem
    first, _, rest = text.partition("\n")
    names = [cell.strip() for cell in first.split(",")]
    if "provider" in names or not first.strip():
        return data
    lines = [first.rstrip("\r") + ",provider"]
    lines += [line.rstrip("\r") + "," if line.strip() else line for line in rest.split("\n")]
    return "\n".join(lines).encode()


def _spend_budget_problems(rows: Sequence[SpendBudgetRow]) -> list[Problem]:
    problems = []
    first_line: dict[tuple, int] = {}
    for row in rows:
        if row.provider is not None and not re.fullmatch(r"[!-~]{1,128}", row.provider):
            problems.append(
                Problem(
                    SPEND_BUDGETS_FILE,
                    row.line_number,
                    "bad_name",
                    f"provider '{row.provider}' is not a provider name (printable ASCII without "
                    "spaces, as the rate card spells it); leave it empty to budget every provider",
                )
            )
        if row.key in first_line:
            what = f"{row.tenant_id} in {row.month:%Y-%m}" + (
                f" with {row.provider}" if row.provider else ""
            )
            problems.append(
                Problem(
                    SPEND_BUDGETS_FILE,
                    row.line_number,
                    "duplicate_budget",
                    f"lines {first_line[row.key]} and {row.line_number} both budget {what}; "
                    "keep one",
                    other_line=first_line[row.key],
                )
            )
        else:
            first_line[row.key] = row.line_number
    return problems


def _fx_problems(rows: Sequence[FxRateRow], reporting_currency: str) -> list[Problem]:
    problems = []
    first_line: dict[tuple[object, str], int] = {}
    for row in rows:
        day_currency = (row.rate_date, row.currency)
        if day_currency in first_line:
            problems.append(
                Problem(
                    FX_RATES_FILE,
                    row.line_number,
                    "duplicate_fx_rate",
                    f"lines {first_line[day_currency]} and {row.line_number} both give the "
                    f"{row.currency} rate for {row.rate_date.isoformat()}; keep one",
                    other_line=first_line[day_currency],
                )
            )
        else:
            first_line[day_currency] = row.line_number
        if row.currency == reporting_currency and row.rate != 1:
            problems.append(
                Problem(
                    FX_RATES_FILE,
                    row.line_number,
                    "reporting_currency_rate",
                    f"{row.currency} is the reporting currency, so its rate can only be 1 (got "
                    f"{row.rate}); delete the row, or set LEDGER_REPORTING_CURRENCY to the "
                    "currency these rates convert to",
                )
            )
    return problems


def _missing_fx(
    files: list[
        tuple[str, Sequence[RateCardRow] | Sequence[PricePlanRow] | Sequence[SpendBudgetRow]]
    ],
    fx_currencies: set[str],
    reporting_currency: str,
) -> list[Problem]:
    problems = []
    reported: set[str] = set()
    for file_name, rows in files:
        for row in rows:
            currency = row.currency
            if currency == reporting_currency or currency in fx_currencies | reported:
                continue
            reported.add(currency)
            problems.append(
                Problem(
                    file_name,
                    row.line_number,
                    "missing_fx",
                    f"currency {currency} is used here but {FX_RATES_FILE} has no {currency} "
                    f"rows, so these amounts cannot be converted to {reporting_currency}; add "
                    f"rows 'date,{currency},rate' (1 {currency} = rate {reporting_currency}) "
                    "starting on or before the first effective_from in "
                    f"{currency}",
                )
            )
    return problems
