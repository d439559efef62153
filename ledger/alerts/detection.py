"""Cost anomaly detection: pure functions on one tenant's daily figures, exact Decimal throughout.

For a tenant and a business day D, each metric is compared with the tenant's own trailing baseline
(the `window_days` before D): the median and the MAD (median absolute deviation, scaled by 1.4826 so
that it estimates a standard deviation), never a mean, so one bad day in the window does not move
the baseline. Metrics and how volume and weekdays are kept out of them:

| metric                     | compared                                  | expected value on D            |
|----------------------------|-------------------------------------------|--------------------------------|
| `<component>_cost`         | cost per billable minute of the sessions  | baseline unit cost x D's       |
|                            | that used the component (its unit cost)   | minutes of those sessions      |
| `cost_per_billable_minute` | total cost / billable minutes             | baseline median                |
| `total_cost`               | the day's total cost                      | median of same-day-type peers  |
| `gross_margin_pct`         | 100 x margin / revenue (a drop)           | baseline median                |

Unit costs do not depend on how busy a day is, so weekday traffic cycles cancel out; the one
volume metric, total cost, is compared with days of the same type (working day or weekend) when the
window holds at least `min_peer_days` of them. Only the adverse direction is an anomaly: costs up,
margin down.

An anomaly is `warning` or `critical` (paged) only when the tenant had enough traffic that day and
the change is a change of unit cost in a well-sampled component (the *rate effect*). A tenant-level
change that is mostly volume or mix (more sessions on the expensive realtime pipeline, three
realtime sessions instead of one) is kept as `info`: recorded and reported, never paged.

The likely cause: the component with the largest rate effect (its share of the change), then, within
it, the provider/model whose cost rose most above its baseline (its share of the component's rise),
and, for a component with a cache, the cache hit rate against its baseline.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from ledger.core.ratios import gross_margin_pct
from ledger.core.vocabulary import COMPONENTS

TENANT_METRICS: tuple[str, ...] = ("cost_per_billable_minute", "total_cost", "gross_margin_pct")
METRICS: tuple[str, ...] = TENANT_METRICS + tuple(f"{c}_cost" for c in COMPONENTS)

SEVERITIES: tuple[str, ...] = ("info", "warning", "critical")
PAGED_SEVERITIES: frozenset[str] = frozenset({"warning", "critical"})
CACHE_LABELS: Mapping[str, str] = {
    "llm": "prefix cache hit rate",
    "realtime": "prefix cache hit rate",
    "tts": "phrase cache hit rate",
    "vision": "embedding cache hit rate",
}

MAD_TO_SIGMA = Decimal("1.4826")
ZERO = Decimal(0)
HUNDRED = Decimal(100)
# Fingerprints are versioned: a change of what they cover starts a new series instead of
# silently matching old deliveries.
FINGERPRINT_VERSION = "v1"


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)


@dataclass(frozen=True)
class ComponentDay:
    cost: Decimal
    minutes: Decimal  # billable minutes of the sessions with a cost in this component
    sessions: int  # sessions with a cost in this component


@dataclass(frozen=True)
class TenantDay:
    """One tenant's figures for one business day, as the marts hold them."""

    tenant_id: str
    business_date: date
    sessions: int
    billable_minutes: Decimal
    revenue: Decimal
    total_cost: Decimal
    components: Mapping[str, ComponentDay]
    # (component, provider, model) -> cost
    provider_costs: Mapping[tuple[str, str, str], Decimal] = field(default_factory=dict)
    # (component, provider, model) -> sessions with a cost there
    provider_sessions: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    # component -> share of the cacheable quantity served from cache (0..1); absent when none
    cache_hit_rates: Mapping[str, Decimal] = field(default_factory=dict)

    @property
    def cost_per_billable_minute(self) -> Decimal | None:
        return self.total_cost / self.billable_minutes if self.billable_minutes > 0 else None

    @property
    def gross_margin_pct(self) -> Decimal | None:
        return gross_margin_pct(self.revenue, self.total_cost)

    def component(self, name: str) -> ComponentDay:
        return self.components.get(name) or ComponentDay(ZERO, ZERO, 0)

    def unit_cost(self, name: str) -> Decimal | None:
        part = self.component(name)
        return part.cost / part.minutes if part.minutes > 0 else None


@dataclass(frozen=True)
class DetectionParams:
    window_days: int = 28
    min_baseline_days: int = 7
    min_peer_days: int = 5
    # Volume below which a tenant (or a component of it) is never paged: tiny samples are noise.
    min_sessions: int = 10
    min_billable_minutes: Decimal = Decimal(30)
    min_component_sessions: int = 10
    # A rise carried by a handful of sessions (one call failed over to a dearer provider) is an
    # outlier, not a trend: the provider/model that explains it must have this many sessions.
    min_cause_sessions: int = 5
    z_warning: Decimal = Decimal(4)
    z_critical: Decimal = Decimal(8)
    # Smallest change worth an alert: % of the expected value (percentage points for the margin).
    min_change_pct: Decimal = Decimal(25)
    min_cost_per_minute_change_pct: Decimal = Decimal(15)
    min_total_cost_change_pct: Decimal = Decimal(30)
    min_margin_drop_points: Decimal = Decimal(3)
    # The MAD of a very steady series is ~0; a floor keeps a 1% wobble from scoring z = 50.
    scale_floor_share: Decimal = Decimal("0.05")
    margin_scale_floor_points: Decimal = Decimal("0.5")
    # Share of a tenant-level change a well-sampled unit-cost rise must explain to page anyone.
    min_rate_explained: Decimal = Decimal("0.5")


DEFAULT_PARAMS = DetectionParams()


@dataclass(frozen=True)
class Cause:
    component: str | None
    component_share: Decimal | None  # of the metric's change, 0..1
    provider: str | None
    model: str | None
    provider_share: Decimal | None  # of the component's rise, 0..1
    kind: str  # "unit_cost" (something got dearer) or "volume_or_mix"
    hint: str  # e.g. "prefix cache hit rate 84.1% -> 1.9%"


@dataclass(frozen=True)
class Anomaly:
    tenant_id: str
    business_date: date
    metric: str
    unit: str  # "currency", "currency/min" or "points"
    value: Decimal
    expected: Decimal
    abs_change: Decimal
    pct_change: Decimal | None
    robust_z: Decimal
    severity: str
    baseline_days: int
    cause: Cause
    note: str  # why it is info rather than paged; empty when paged

    @property
    def direction(self) -> str:
        return "down" if self.metric == "gross_margin_pct" else "up"

    @property
    def fingerprint(self) -> str:
        """Stable across runs and across the days of one continuing problem: tenant, metric and
        direction, not the date, so a cause that lasts three days is one notification."""
        return fingerprint(self.tenant_id, self.metric, self.direction)

    @property
    def anomaly_id(self) -> str:
        return _digest(f"{self.fingerprint}|{self.business_date.isoformat()}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprint(tenant_id: str, metric: str, direction: str) -> str:
    return _digest(f"{FINGERPRINT_VERSION}|{tenant_id}|{metric}|{direction}")


# ---- robust statistics ---------------------------------------------------------------------------


def median(values: Sequence[Decimal]) -> Decimal:
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def robust_scale(values: Sequence[Decimal], centre: Decimal, floor: Decimal) -> Decimal:
    """MAD x 1.4826, but never below `floor` (a steady series must not turn noise into z = 50)."""
    mad = median([abs(v - centre) for v in values])
    return max(mad * MAD_TO_SIGMA, floor)


def is_weekend(day: date) -> bool:
    return day.weekday() >= 5


def _pct(change: Decimal, expected: Decimal) -> Decimal | None:
    return HUNDRED * change / abs(expected) if expected != 0 else None


# ---- detection -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Baseline:
    days: list[TenantDay]  # trailing window, oldest first
    peers: list[TenantDay]  # same day type when there are enough of them, else `days`


def _baseline(history: Sequence[TenantDay], day: date, params: DetectionParams) -> _Baseline:
    days = sorted(
        (h for h in history if 0 < (day - h.business_date).days <= params.window_days),
        key=lambda h: h.business_date,
    )
    peers = [h for h in days if is_weekend(h.business_date) == is_weekend(day)]
    return _Baseline(days, peers if len(peers) >= params.min_peer_days else days)


def _rate_effects(
    today: TenantDay, baseline: _Baseline, params: DetectionParams
) -> dict[str, tuple[Decimal, bool]]:
    """Per component: (unit-cost change x today's minutes of it, is it well sampled today)."""
    effects = {}
    for name in COMPONENTS:
        unit = today.unit_cost(name)
        history = [u for u in (h.unit_cost(name) for h in baseline.days) if u is not None]
        if unit is None or len(history) < params.min_baseline_days:
            continue
        effect = (unit - median(history)) * today.component(name).minutes
        sampled = today.component(name).sessions >= params.min_component_sessions
        effects[name] = (effect, sampled)
    return effects


def _provider_cause(
    today: TenantDay, baseline: _Baseline, component: str
) -> tuple[str | None, str | None, Decimal | None]:
    """The provider/model whose cost per component-minute rose most, with its share of the rise."""
    minutes = today.component(component).minutes
    keys = {k for k in today.provider_costs if k[0] == component}
    for h in baseline.days:
        keys |= {k for k in h.provider_costs if k[0] == component}
    rises: dict[tuple[str, str, str], Decimal] = {}
    for key in keys:
        history = [
            h.provider_costs.get(key, ZERO) / h.component(component).minutes
            for h in baseline.days
            if h.component(component).minutes > 0
        ]
        if not history:
            continue
        rise = today.provider_costs.get(key, ZERO) - median(history) * minutes
        if rise > 0:
            rises[key] = rise
    if not rises:
        return None, None, None
    top = max(sorted(rises), key=lambda k: rises[k])
    return top[1], top[2], rises[top] / sum(rises.values())


def _cache_hint(today: TenantDay, baseline: _Baseline, component: str) -> str:
    label = CACHE_LABELS.get(component)
    rate = today.cache_hit_rates.get(component)
    history = [
        h.cache_hit_rates[component] for h in baseline.days if component in h.cache_hit_rates
    ]
    if label is None or rate is None or not history:
        return ""
    usual = median(history)
    return f"{label} {format_share(rate)} (usually {format_share(usual)})"


def format_share(value: Decimal) -> str:
    """0..1 as a percentage with one decimal, half-even."""
    return f"{(value * HUNDRED).quantize(Decimal('0.1'))}%"


def _cause(
    today: TenantDay,
    baseline: _Baseline,
    change: Decimal,
    effects: Mapping[str, tuple[Decimal, bool]],
    params: DetectionParams,
    fixed_component: str | None = None,
) -> tuple[Cause, bool]:
    """The likely cause of a change worth `change` (currency, > 0), and whether unit-cost rises in
    well-sampled components explain enough of it to page someone."""
    if fixed_component is not None:
        component, share = fixed_component, Decimal(1)
        explained = True
    else:
        sampled = {n: e for n, (e, ok) in effects.items() if ok and e > 0}
        explained_amount = sum(sampled.values(), ZERO)
        explained = change > 0 and explained_amount / change >= params.min_rate_explained
        if sampled and explained:
            component = max(sorted(sampled), key=lambda n: sampled[n])
            share = min(sampled[component] / change, Decimal(1))
        else:
            # Not a unit-cost change: name the component whose cost moved most above its usual
            # share of the day (the mix), so the reader still sees where the money went.
            usual_minutes = median([h.billable_minutes for h in baseline.days])
            volume = today.billable_minutes / usual_minutes if usual_minutes > 0 else Decimal(1)
            moves = {
                n: today.component(n).cost
                - median([h.component(n).cost for h in baseline.days]) * volume
                for n in COMPONENTS
            }
            positive = {n: m for n, m in moves.items() if m > 0}
            if not positive:
                return Cause(None, None, None, None, None, "volume_or_mix", ""), False
            component = max(sorted(positive), key=lambda n: positive[n])
            share = min(positive[component] / change, Decimal(1)) if change > 0 else None
    provider, model, provider_share = _provider_cause(today, baseline, component)
    kind = "unit_cost" if explained else "volume_or_mix"
    # A cache hit rate explains a unit cost, not a shift of volume or mix.
    hint = _cache_hint(today, baseline, component) if explained else ""
    return Cause(component, share, provider, model, provider_share, kind, hint), explained


def _severity(z: Decimal, pct: Decimal | None, min_pct: Decimal, params: DetectionParams) -> str:
    big = pct is None or abs(pct) >= 2 * min_pct
    return "critical" if z >= params.z_critical and big else "warning"


@dataclass(frozen=True)
class _MetricRule:
    """How one metric is measured, baselined and sized: one row of the module docstring's table.

    `measure` is the figure compared with the baseline (a unit cost, a ratio or a total);
    `sized` turns today and the baseline centre into (value shown, expected value, change in
    currency), the three figures an anomaly carries.
    """

    metric: str
    unit: str
    measure: Callable[[TenantDay], Decimal | None]
    sized: Callable[[TenantDay, Decimal], tuple[Decimal, Decimal, Decimal]]
    # Smallest change worth an alert (% of the expected value, or points for a ratio in points).
    min_change: Callable[[DetectionParams], Decimal]
    # The MAD's floor, from the baseline centre: a steady series must not turn noise into z = 50.
    scale_floor: Callable[[Decimal, DetectionParams], Decimal]
    # A volume metric compares with same-day-type peers; a unit metric with every baseline day.
    over_peers: bool = False
    # +1: a rise is adverse (costs); -1: a drop is (margin), measured in points, not %.
    adverse: int = 1
    # A cost-like centre must be positive to scale against; a margin may be anything.
    positive_centre: bool = True
    component: str | None = None

    def history(self, baseline: _Baseline) -> list[Decimal]:
        days = baseline.peers if self.over_peers else baseline.days
        return [v for v in (self.measure(h) for h in days) if v is not None]

    def is_small(self, today: TenantDay, tenant_too_small: bool, params: DetectionParams) -> bool:
        if self.component is None:
            return tenant_too_small
        return tenant_too_small or today.component(self.component).sessions < (
            params.min_component_sessions
        )


def _share_floor(centre: Decimal, params: DetectionParams) -> Decimal:
    return centre * params.scale_floor_share


def _component_rule(name: str) -> _MetricRule:
    """`<component>_cost`: the component's unit cost; expected = baseline unit cost x today's
    minutes of the sessions that used it."""

    def sized(today: TenantDay, centre: Decimal) -> tuple[Decimal, Decimal, Decimal]:
        part = today.component(name)
        unit = today.unit_cost(name) or ZERO
        return part.cost, centre * part.minutes, (unit - centre) * part.minutes

    return _MetricRule(
        metric=f"{name}_cost",
        unit="currency",
        measure=lambda day: day.unit_cost(name),
        sized=sized,
        min_change=lambda params: params.min_change_pct,
        scale_floor=_share_floor,
        component=name,
    )


def _margin_sized(today: TenantDay, centre: Decimal) -> tuple[Decimal, Decimal, Decimal]:
    # In currency, a margin drop is the cost that today's revenue carries above the usual
    # cost-to-revenue ratio.
    usual_ratio = (HUNDRED - centre) / HUNDRED
    margin = today.gross_margin_pct or ZERO
    return margin, centre, today.total_cost - usual_ratio * today.revenue


# In the order anomalies of one tenant-day are found (ties in the final sort keep it).
_RULES: tuple[_MetricRule, ...] = (
    *(_component_rule(name) for name in COMPONENTS),
    _MetricRule(
        metric="cost_per_billable_minute",
        unit="currency/min",
        measure=lambda day: day.cost_per_billable_minute,
        sized=lambda today, centre: (
            today.cost_per_billable_minute or ZERO,
            centre,
            ((today.cost_per_billable_minute or ZERO) - centre) * today.billable_minutes,
        ),
        min_change=lambda params: params.min_cost_per_minute_change_pct,
        scale_floor=_share_floor,
    ),
    _MetricRule(
        metric="total_cost",
        unit="currency",
        measure=lambda day: day.total_cost,
        sized=lambda today, centre: (today.total_cost, centre, today.total_cost - centre),
        min_change=lambda params: params.min_total_cost_change_pct,
        scale_floor=_share_floor,
        over_peers=True,
    ),
    _MetricRule(
        metric="gross_margin_pct",
        unit="points",
        measure=lambda day: day.gross_margin_pct,
        sized=_margin_sized,
        min_change=lambda params: params.min_margin_drop_points,
        scale_floor=lambda centre, params: params.margin_scale_floor_points,
        adverse=-1,
        positive_centre=False,
    ),
)


def detect_tenant_day(
    today: TenantDay, history: Sequence[TenantDay], params: DetectionParams = DEFAULT_PARAMS
) -> list[Anomaly]:
    """Every metric of `today` that departs from the tenant's trailing baseline, adverse side."""
    baseline = _baseline(history, today.business_date, params)
    if len(baseline.days) < params.min_baseline_days:
        return []
    tenant_too_small = (
        today.sessions < params.min_sessions or today.billable_minutes < params.min_billable_minutes
    )
    effects = _rate_effects(today, baseline, params)
    found: list[Anomaly] = []
    for rule in _RULES:
        measured = rule.measure(today)
        values = rule.history(baseline)
        # Peers are at least `min_peer_days` by construction; unit metrics need a full baseline.
        if measured is None or (not rule.over_peers and len(values) < params.min_baseline_days):
            continue
        centre = median(values)
        if rule.positive_centre and centre <= 0:
            continue
        scale = robust_scale(values, centre, rule.scale_floor(centre, params))
        z = rule.adverse * (measured - centre) / scale
        value, expected, currency_change = rule.sized(today, centre)
        change = value - expected
        pct = _pct(change, expected)
        min_change = rule.min_change(params)
        if z < params.z_warning:
            continue
        if rule.adverse < 0:
            if -change < min_change:  # points
                continue
        elif pct is not None and pct < min_change:
            continue
        cause, explained = _cause(today, baseline, currency_change, effects, params, rule.component)
        cause_sessions = today.provider_sessions.get(
            (cause.component or "", cause.provider or "", cause.model or ""), 0
        )
        if rule.is_small(today, tenant_too_small, params):
            note = "too little traffic that day to page anyone"
        elif not explained:
            note = "explained by volume or mix, not by a unit cost rising"
        elif cause.provider is not None and cause_sessions < params.min_cause_sessions:
            note = (
                f"carried by {cause_sessions} session(s) of {cause.provider}/{cause.model}: "
                "an outlier, not a trend"
            )
        else:
            note = ""
        found.append(
            Anomaly(
                tenant_id=today.tenant_id,
                business_date=today.business_date,
                metric=rule.metric,
                unit=rule.unit,
                value=value,
                expected=expected,
                abs_change=change,
                pct_change=pct,
                robust_z=z,
                severity="info" if note else _severity(z, pct, min_change, params),
                baseline_days=len(baseline.days),
                cause=cause,
                note=note,
            )
        )
    return found


def detect(
    figures: Sequence[TenantDay], day: date, params: DetectionParams = DEFAULT_PARAMS
) -> list[Anomaly]:
    """Anomalies of every tenant on `day`; `figures` holds that day and the trailing window."""
    by_tenant: dict[str, list[TenantDay]] = {}
    for row in figures:
        by_tenant.setdefault(row.tenant_id, []).append(row)
    found: list[Anomaly] = []
    for tenant_id in sorted(by_tenant):
        rows = by_tenant[tenant_id]
        today = next((r for r in rows if r.business_date == day), None)
        if today is not None:
            found += detect_tenant_day(today, rows, params)
    return sorted(
        found, key=lambda a: (-severity_rank(a.severity), a.tenant_id, METRICS.index(a.metric))
    )
