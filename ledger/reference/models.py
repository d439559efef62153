"""Reference data rows (SPEC section 4): rate card, FX rates, price plans, latency budgets.

Each row model is built from the value types of `ledger.reference.rules` (which carry the rules and
their messages) and adds the rules that span a row (a non-empty effective window) or the file.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
    field_validator,
    model_validator,
)

from ledger.contract.events import SEGMENTS
from ledger.core.vocabulary import INFERENCE_GATEWAYS
from ledger.reference.rules import (
    BUDGET_SCENARIOS,
    DEFAULT_OBJECTIVE,
    FIRST_AUDIO,
    UNIT_PRICE_MAX_INTEGER_DIGITS,
    UNKNOWN_SCENARIO,
    UNKNOWN_SCENARIO_FALLBACK,
    Amount,
    BudgetMs,
    CalendarDate,
    Currency,
    Increment,
    Instant,
    Meter,
    Month,
    Name,
    Objective,
    OpenInstant,
    Per,
    Rate,
    ScenarioName,
    SegmentName,
    Text,
    _rule,
    exact_ratio,
    show_instant,
)

# ---- rows ----------------------------------------------------------------------------------------


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    line_number: int


class _WindowedRow(_Row):
    effective_from: Instant
    effective_to: OpenInstant = None

    @model_validator(mode="after")
    def _window_is_not_empty(self) -> _WindowedRow:
        if self.effective_to is not None and self.effective_to <= self.effective_from:
            raise _rule(
                "empty_window",
                "effective_to ({to}) must be after effective_from ({start}): the row applies "
                "from effective_from (inclusive) to effective_to (exclusive); make effective_to "
                "later, or leave it empty for no end",
                to=show_instant(self.effective_to),
                start=show_instant(self.effective_from),
            )
        return self

    def overlaps(self, other: _WindowedRow) -> bool:
        starts_before_other_ends = other.effective_to is None or self.effective_from < (
            other.effective_to
        )
        other_starts_before_end = self.effective_to is None or other.effective_from < (
            self.effective_to
        )
        return starts_before_other_ends and other_starts_before_end

    def in_effect_at(self, instant: datetime) -> bool:
        return self.effective_from <= instant and (
            self.effective_to is None or instant < self.effective_to
        )


class RateCardRow(_WindowedRow):
    """One price: `quantity x price / per` in `currency` for a (provider, model, meter)."""

    provider: Text
    model: Text  # for infra meters: the event's `resource`
    meter: Meter
    price: Amount
    per: Per
    currency: Currency

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unit_price(self) -> Decimal:
        return exact_ratio(self.price, self.per)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.provider, self.model, self.meter)

    @model_validator(mode="after")
    def _unit_price_fits(self) -> RateCardRow:
        if self.unit_price.adjusted() >= UNIT_PRICE_MAX_INTEGER_DIGITS:
            raise _rule(
                "out_of_range",
                "price / per = {value} is too large for the ledger (at most {digits} digits "
                "before the decimal point); check price and per",
                value=str(self.unit_price),
                digits=UNIT_PRICE_MAX_INTEGER_DIGITS,
            )
        return self


class ProviderAliasRow(_Row):
    """A provider name or endpoint host as events carry it (`seen`, any case) -> the provider."""

    seen: Name
    provider: Name


class ModelAliasRow(_Row):
    """A model name as events carry it (`seen`, any case) for `provider` -> the model."""

    provider: Name
    seen: Name
    model: Name


class FxRateRow(_Row):
    """1 unit of `currency` = `rate` units of the reporting currency, from `rate_date` on."""

    rate_date: CalendarDate
    currency: Currency
    rate: Rate


class PricePlanRow(_WindowedRow):
    """A tenant's price: per_session_fee + price_per_minute x billed minutes, in `currency`."""

    tenant_id: Text
    price_per_minute: Amount
    per_session_fee: Amount
    billing_increment_seconds: Increment
    currency: Currency

    @computed_field  # type: ignore[prop-decorator]
    @property
    def price_per_second(self) -> Decimal:
        return exact_ratio(self.price_per_minute, Decimal(60))


class SpendBudgetRow(_Row):
    """SPEC 13: what a tenant may spend in a calendar month (of the reporting time zone), in
    `currency`; with `provider`, what it may spend with that provider alone."""

    tenant_id: Name
    month: Month
    amount: Amount
    currency: Currency
    provider: str | None = None

    @field_validator("provider", mode="before")
    @classmethod
    def _empty_is_every_provider(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @property
    def key(self) -> tuple[str, object, str | None]:
        return (self.tenant_id, self.month, self.provider)


# ---- latency budgets (the YAML's shape; cross-references are checked by the loader) ------------


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ProfileSegmentSpec(_Spec):
    budget_ms: BudgetMs
    owner: str | None = None

    @model_validator(mode="after")
    def _has_owner(self) -> ProfileSegmentSpec:
        if self.owner is None or not self.owner.strip():
            raise _rule(
                "missing_owner",
                "this segment has no owner; add `owner: <team>` (audio, inference or platform) "
                "so an overshoot reaches the team that can fix it",
            )
        return self


class OverrideSegmentSpec(_Spec):
    budget_ms: BudgetMs
    owner: str | None = None  # None: the default profile's owner


class ProfileSpec(_Spec):
    first_audio_ms: BudgetMs
    segments: dict[SegmentName, ProfileSegmentSpec]
    # SPEC 13: the share of turns each segment (and first audio) must keep within budget.
    objective: Objective = DEFAULT_OBJECTIVE


class TenantOverrideSpec(_Spec):
    first_audio_ms: BudgetMs | None = None
    # A tenant tier may promise more (or less) than its profiles; None keeps each profile's.
    objective: Objective | None = None
    segments: dict[SegmentName, OverrideSegmentSpec] = Field(default_factory=dict)


class LatencyBudgetsSpec(_Spec):
    profiles: dict[str, ProfileSpec]
    scenarios: dict[ScenarioName, str]
    tenants: dict[str, TenantOverrideSpec] = Field(default_factory=dict)


class LatencyBudgetRow(BaseModel):
    """One budget: `tenant_id` None is the scenario default; segment `first_audio` has no owner.
    `profile` names the scenario's profile and `objective` is its SLO objective (SPEC 13)."""

    model_config = ConfigDict(frozen=True)

    scenario: str
    tenant_id: str | None
    segment: str
    budget_ms: int
    owner: str | None
    profile: str = ""
    objective: Decimal = DEFAULT_OBJECTIVE


def resolve_latency_budgets(spec: LatencyBudgetsSpec) -> tuple[LatencyBudgetRow, ...]:
    """Flatten profiles into rows per (scenario, segment); a tenant's rows merge its override
    over every scenario's default, so a lookup is `coalesce(tenant row, default row)`."""

    def profile_for(scenario: str) -> tuple[str, ProfileSpec]:
        name = spec.scenarios.get(scenario)
        if name is None and scenario == UNKNOWN_SCENARIO:
            name = spec.scenarios[UNKNOWN_SCENARIO_FALLBACK]
        return str(name), spec.profiles[str(name)]

    rows: list[LatencyBudgetRow] = []
    tenants: list[tuple[str | None, TenantOverrideSpec]] = [(None, TenantOverrideSpec())]
    tenants += sorted(spec.tenants.items())
    for tenant_id, override in tenants:
        for scenario in BUDGET_SCENARIOS:
            profile_name, profile = profile_for(scenario)
            objective = override.objective or profile.objective
            for segment in SEGMENTS:
                default = profile.segments[segment]
                change = override.segments.get(segment)
                rows.append(
                    LatencyBudgetRow(
                        scenario=scenario,
                        tenant_id=tenant_id,
                        segment=segment,
                        budget_ms=change.budget_ms if change else default.budget_ms,
                        owner=(change.owner if change and change.owner else default.owner),
                        profile=profile_name,
                        objective=objective,
                    )
                )
            rows.append(
                LatencyBudgetRow(
                    scenario=scenario,
                    tenant_id=tenant_id,
                    segment=FIRST_AUDIO,
                    budget_ms=override.first_audio_ms or profile.first_audio_ms,
                    owner=None,
                    profile=profile_name,
                    objective=objective,
                )
            )
    return tuple(rows)


# ---- everything, loaded ------------------------------------------------------------------------


class ReferenceData(BaseModel):
    """All four reference files, validated. Build it with `ledger.reference.load_reference`."""

    model_config = ConfigDict(frozen=True)

    reference_dir: Path
    reporting_currency: str
    loaded_at: datetime  # naive UTC
    content_sha256: str
    rate_card: tuple[RateCardRow, ...]
    fx_rates: tuple[FxRateRow, ...]
    price_plans: tuple[PricePlanRow, ...]
    latency_spec: LatencyBudgetsSpec
    latency_budgets: tuple[LatencyBudgetRow, ...]
    provider_aliases: tuple[ProviderAliasRow, ...] = ()
    model_aliases: tuple[ModelAliasRow, ...] = ()
    spend_budgets: tuple[SpendBudgetRow, ...] = ()

    def resolve_name(self, provider: str, model: str) -> tuple[str, str]:
        """The rate card's (provider, model) for a usage line's names (SPEC 4), the rule of the
        dbt macro rate_card_names (dbt/macros), said once more for `ledger rates check|import`:

        1. the provider: an alias of its lower-cased name, else the rate card's spelling of it
           (names match case-insensitively), else the name as seen;
        2. LiveKit Inference: a provider `livekit` or `unknown` whose model reads
           `provider/model[:option]` is that provider (step 1 again) and that model;
        3. the model: an alias of its lower-cased name for that provider, else the rate card's
           spelling of it for that provider, else the name as seen.
        """
        aliases = {row.seen.lower(): row.provider for row in self.provider_aliases}
        card = {row.provider.lower(): row.provider for row in self.rate_card}

        def provider_of(name: str) -> str:
            key = name.lower()
            return aliases.get(key) or card.get(key) or name

        resolved = provider_of(provider)
        if resolved.lower() in INFERENCE_GATEWAYS and "/" in model:
            inner, rest = model.split("/", 1)
            resolved, model = provider_of(inner), rest.split(":", 1)[0]
        model_aliases = {
            row.seen.lower(): row.model for row in self.model_aliases if row.provider == resolved
        }
        card_models = {
            row.model.lower(): row.model for row in self.rate_card if row.provider == resolved
        }
        key = model.lower()
        return resolved, model_aliases.get(key) or card_models.get(key) or model

    def rate(self, provider: str, model: str, meter: str, at: datetime) -> RateCardRow | None:
        """The rate card row in effect at `at` (naive UTC), or None: that usage is unpriced."""
        for row in self.rate_card:
            if row.key == (provider, model, meter) and row.in_effect_at(at):
                return row
        return None

    def price_plan(self, tenant_id: str, at: datetime) -> PricePlanRow | None:
        for row in self.price_plans:
            if row.tenant_id == tenant_id and row.in_effect_at(at):
                return row
        return None

    def latency_budget(
        self, scenario: str, segment: str, tenant_id: str | None = None
    ) -> LatencyBudgetRow:
        """The budget for (scenario, segment), the tenant's override if it has one."""
        default: LatencyBudgetRow | None = None
        for row in self.latency_budgets:
            if row.scenario == scenario and row.segment == segment:
                if row.tenant_id == tenant_id and tenant_id is not None:
                    return row
                if row.tenant_id is None:
                    default = row
        if default is None:
            raise KeyError(f"no latency budget for scenario {scenario!r}, segment {segment!r}")
        return default
