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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from ledger.ratios import gross_margin_pct
from ledger.vocabulary import COMPONENTS

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

    def emit(
        metric: str,
        unit: str,
        value: Decimal,
        expected: Decimal,
        z: Decimal,
        min_pct: Decimal,
        currency_change: Decimal,
        fixed_component: str | None = None,
        small: bool = False,
    ) -> None:
        change = value - expected
        pct = _pct(change, expected)
        adverse = -change if metric == "gross_margin_pct" else change
        if metric == "gross_margin_pct":
            if z < params.z_warning or adverse < min_pct:
                return
        elif z < params.z_warning or (pct is not None and pct < min_pct):
            return
        cause, explained = _cause(
            today, baseline, currency_change, effects, params, fixed_component
        )
        note = ""
        cause_sessions = today.provider_sessions.get(
            (cause.component or "", cause.provider or "", cause.model or ""), 0
        )
        if small:
            note = "too little traffic that day to page anyone"
        elif not explained:
            note = "explained by volume or mix, not by a unit cost rising"
        elif cause.provider is not None and cause_sessions < params.min_cause_sessions:
            note = (
                f"carried by {cause_sessions} session(s) of {cause.provider}/{cause.model}: "
                "an outlier, not a trend"
            )
        severity = "info" if note else _severity(z, pct, min_pct, params)
        found.append(
            Anomaly(
                tenant_id=today.tenant_id,
                business_date=today.business_date,
                metric=metric,
                unit=unit,
                value=value,
                expected=expected,
                abs_change=change,
                pct_change=pct,
                robust_z=z,
                severity=severity,
                baseline_days=len(baseline.days),
                cause=cause,
                note=note,
            )
        )

    # Components: unit cost per minute of the sessions that used the component.
    for name in COMPONENTS:
        unit = today.unit_cost(name)
        history_units = [u for u in (h.unit_cost(name) for h in baseline.days) if u is not None]
        if unit is None or len(history_units) < params.min_baseline_days:
            continue
        centre = median(history_units)
        if centre <= 0:
            continue
        scale = robust_scale(history_units, centre, centre * params.scale_floor_share)
        minutes = today.component(name).minutes
        emit(
            f"{name}_cost",
            "currency",
            today.component(name).cost,
            centre * minutes,
            (unit - centre) / scale,
            params.min_change_pct,
            (unit - centre) * minutes,
            fixed_component=name,
            small=tenant_too_small
            or today.component(name).sessions < params.min_component_sessions,
        )

    cpm = today.cost_per_billable_minute
    history_cpm = [v for v in (h.cost_per_billable_minute for h in baseline.days) if v is not None]
    if cpm is not None and len(history_cpm) >= params.min_baseline_days:
        centre = median(history_cpm)
        if centre > 0:
            scale = robust_scale(history_cpm, centre, centre * params.scale_floor_share)
            emit(
                "cost_per_billable_minute",
                "currency/min",
                cpm,
                centre,
                (cpm - centre) / scale,
                params.min_cost_per_minute_change_pct,
                (cpm - centre) * today.billable_minutes,
                small=tenant_too_small,
            )

    peers = [h.total_cost for h in baseline.peers]
    centre = median(peers)
    if centre > 0:
        scale = robust_scale(peers, centre, centre * params.scale_floor_share)
        emit(
            "total_cost",
            "currency",
            today.total_cost,
            centre,
            (today.total_cost - centre) / scale,
            params.min_total_cost_change_pct,
            today.total_cost - centre,
            small=tenant_too_small,
        )

    margin = today.gross_margin_pct
    history_margin = [v for v in (h.gross_margin_pct for h in baseline.days) if v is not None]
    if margin is not None and len(history_margin) >= params.min_baseline_days:
        centre = median(history_margin)
        scale = robust_scale(history_margin, centre, params.margin_scale_floor_points)
        # In currency, a margin drop is the cost that today's revenue carries above the usual
        # cost-to-revenue ratio.
        usual_ratio = (HUNDRED - centre) / HUNDRED
        emit(
            "gross_margin_pct",
            "points",
            margin,
            centre,
            (centre - margin) / scale,
            params.min_margin_drop_points,
            today.total_cost - usual_ratio * today.revenue,
            small=tenant_too_small,
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
