"""What drove a cost change: the change of cost between two periods split into volume, price and
mix effects per tenant, component, provider and model, exactly (docs/boards.md, "What drove it").

The boards (Overview, Margin) and the weekly review read the same cells through `cells_sql` and
split them with `decompose`:

    rows = con.execute(cells_sql(where), [first, last, *params]).fetchall()  # both periods
    drivers = decompose(rows)

A *cell* is one tenant x component x provider x model x meter x cache hit/miss: the finest grain at
which a quantity has one unit (tokens, characters, seconds) and one rate-card price. Per cell, with
C the cost, q the billed quantity, p the rate-card unit price (in the reporting currency) and M the
tenant's billable minutes, `0` the comparison period and `1` the selected one:

- volume = C0 x (M1 - M0) / M0: the cost the tenant's change of billable minutes brings at the
  comparison period's usage per minute and prices (0 when the cell or the tenant had no cost or
  no minutes then);
- price = q1 x (p1 - p0): the rate-card price change on the selected period's quantity (p0: the
  comparison period's price; the quantity-weighted mean C/q when it changed inside a period, so
  price is then C1 - q1 x p0); 0 when the cell is new or gone;
- mix = (C1 - C0) - volume - price: everything else (usage per minute, the share of models,
  cache hits, new and vanished cells), so the three add up to the change exactly.

Volume and price are computed to 12 places (the marts' money scale), mix is the exact remainder:
the parts of every cell, and so of every group of cells, sum to its change to the last digit.
Cost the usage lines do not carry (a session's cost beyond its priced lines) is one "unattributed"
cell whose change is all mix, so the cells add up to the sessions' total cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

from ledger.core.numbers import round_money, round_to

ZERO = Decimal(0)
SCALE = Decimal("0.000000000001")
DIMENSIONS = ("tenant_id", "component", "provider", "model")
EFFECTS = ("volume", "price", "mix")
UNATTRIBUTED = "unattributed"


def cells_sql(session_where: str) -> str:
    """Both periods' cells, and each tenant's billable minutes and cost, one row per cell (or
    tenant) and period. `session_where` selects the sessions of both periods (the comparison
    period lies just before the selected one: one date range covers both) over
    `marts.fct_session_ledger`, by the columns of `marts.fct_usage_cost_daily`'s session grain
    only (tenant_id, business_date, scenario, pipeline, is_replay): the cells are that mart's
    rows of the grains the selected sessions have, so their cost grows with days, not with usage
    lines. The statement's parameters are the selected period's first and last date, then
    `session_where`'s own."""
    return f"""
        with sessions as (
            select case when business_date between ? and ? then 1 else 0 end as period,
                tenant_id, business_date, scenario, pipeline, is_replay, billable_minutes,
                total_cost
            from marts.fct_session_ledger
            where {session_where}
        ),
        tenants as (
            select period, tenant_id, coalesce(sum(billable_minutes), 0) as minutes,
                coalesce(sum(total_cost), 0) as cost
            from sessions group by all
        ),
        grains as (
            select distinct period, tenant_id, business_date, scenario, pipeline, is_replay
            from sessions
        ),
        lines as (
            select grains.period, grains.tenant_id, cells.component,
                coalesce(cells.provider, '') as provider, coalesce(cells.model, '') as model,
                cells.meter, coalesce(cells.is_cache_hit, false) as is_cache_hit,
                sum(cells.priced_billed_quantity) as quantity, sum(cells.cost) as cost,
                min(cells.min_unit_price_reporting) as min_price,
                max(cells.max_unit_price_reporting) as max_price
            from marts.fct_usage_cost_daily as cells
            inner join grains
                on cells.tenant_id = grains.tenant_id
                and cells.business_date = grains.business_date
                and cells.scenario is not distinct from grains.scenario
                and cells.pipeline is not distinct from grains.pipeline
                and cells.is_replay = grains.is_replay
            where cells.priced_line_count > 0
            group by all
        )
        select lines.period, lines.tenant_id, lines.component, lines.provider, lines.model,
            lines.meter, lines.is_cache_hit, lines.quantity, lines.cost, lines.min_price,
            lines.max_price, tenants.minutes, tenants.cost as tenant_cost
        from lines inner join tenants using (period, tenant_id)
        union all
        select period, tenant_id, null, null, null, null, null, null, null, null, null,
            minutes, cost
        from tenants
        order by 1, 2, 3, 4, 5, 6, 7
    """


@dataclass(frozen=True)
class Driver:
    """One cell's (or a group's) cost in both periods and its change split into effects."""

    tenant_id: str
    component: str
    provider: str
    model: str
    before: Decimal
    now: Decimal
    volume: Decimal
    price: Decimal
    mix: Decimal

    @property
    def change(self) -> Decimal:
        return self.now - self.before

    def key(self, dimensions: Sequence[str]) -> tuple[str, ...]:
        return tuple(getattr(self, d) for d in dimensions)


@dataclass
class _Cell:
    quantity: Decimal = ZERO
    cost: Decimal = ZERO
    min_price: Decimal | None = None
    max_price: Decimal | None = None

    @property
    def price(self) -> Decimal | None:
        """The period's rate-card unit price: the one price, or the quantity-weighted mean."""
        if self.min_price is None or not self.quantity:
            return None
        if self.min_price == self.max_price:
            return self.min_price
        with localcontext() as context:
            context.prec = 60
            return self.cost / self.quantity


def _q(value: Decimal) -> Decimal:
    return value.quantize(SCALE, rounding=ROUND_HALF_EVEN)


def _split(before: _Cell, now: _Cell, minutes: tuple[Decimal, Decimal]) -> tuple[Decimal, ...]:
    change = now.cost - before.cost
    volume = price = ZERO
    with localcontext() as context:
        context.prec = 60
        if before.cost and minutes[0]:
            volume = _q(before.cost * (minutes[1] - minutes[0]) / minutes[0])
        p0, p1 = before.price, now.price
        if p0 is not None and p1 is not None and now.quantity:
            if now.min_price == now.max_price:
                price = _q(now.quantity * (p1 - p0))
            else:
                price = _q(now.cost - now.quantity * p0)
    return volume, price, change - volume - price


def decompose(rows: Iterable[Sequence]) -> list[Driver]:
    """The drivers of every cell from `cells_sql`'s rows (sorted by tenant, component, provider,
    model; the meters and cache hits of one model summed)."""
    cells: dict[tuple, list[_Cell]] = {}
    minutes: dict[str, list[Decimal]] = {}
    tenant_costs: dict[str, list[Decimal]] = {}
    for row in rows:
        period, tenant, component, provider, model, meter, hit = row[:7]
        quantity, cost, low, high, tenant_minutes, tenant_cost = row[7:]
        minutes.setdefault(tenant, [ZERO, ZERO])[period] = Decimal(tenant_minutes)
        tenant_costs.setdefault(tenant, [ZERO, ZERO])[period] = Decimal(tenant_cost)
        if component is None:
            continue
        pair = cells.setdefault(
            (tenant, component, provider, model, meter, hit), [_Cell(), _Cell()]
        )
        pair[period] = _Cell(Decimal(quantity), Decimal(cost), low, high)
    grouped: dict[tuple[str, str, str, str], list[Decimal]] = {}
    for (tenant, component, provider, model, _meter, _hit), (before, now) in cells.items():
        parts = _split(before, now, (minutes[tenant][0], minutes[tenant][1]))
        sums = grouped.setdefault((tenant, component, provider, model), [ZERO] * 5)
        for i, value in enumerate((before.cost, now.cost, *parts)):
            sums[i] += value
    # What the sessions cost beyond their priced lines: all mix, so the cells add up.
    for tenant, (before_total, now_total) in tenant_costs.items():
        lines = [sum(v[i] for k, v in grouped.items() if k[0] == tenant) or ZERO for i in (0, 1)]
        rest = (before_total - lines[0], now_total - lines[1])
        if any(rest):
            grouped[(tenant, UNATTRIBUTED, "", "")] = [*rest, ZERO, ZERO, rest[1] - rest[0]]
    return [
        Driver(*key, *values)  # type: ignore[arg-type]
        for key, values in sorted(grouped.items())
    ]


def group(drivers: Iterable[Driver], dimensions: Sequence[str]) -> list[Driver]:
    """The drivers summed by `dimensions` (the others read "all"), in key order."""
    sums: dict[tuple[str, ...], list[Decimal]] = {}
    for driver in drivers:
        values = (driver.before, driver.now, driver.volume, driver.price, driver.mix)
        target = sums.setdefault(driver.key(dimensions), [ZERO] * 5)
        for i, value in enumerate(values):
            target[i] += value
    result = []
    for key, values in sorted(sums.items()):
        named = dict(zip(dimensions, key, strict=True))
        result.append(
            Driver(*(named.get(d, "all") for d in DIMENSIONS), *values)  # type: ignore[arg-type]
        )
    return result


def total(drivers: Iterable[Driver]) -> Driver:
    """Every driver summed: the headline's change and its three effects."""
    (whole,) = group(drivers, ()) or [Driver("all", "all", "all", "all", *([ZERO] * 5))]
    return whole


# ---- what people read: rounded to the cent, adding up ---------------------------------------------

TOP_MOVERS = 10
OTHERS = "All others"


@dataclass(frozen=True)
class Mover:
    """One row of the top movers as shown: amounts to the cent, the change and its effects
    rounded so they add up (`movers`)."""

    name: tuple[str, ...]  # the row's values of the dimensions (OTHERS for the rest)
    before: Decimal
    now: Decimal
    change: Decimal
    volume: Decimal
    price: Decimal
    mix: Decimal


def headline(drivers: Iterable[Driver]) -> Mover:
    """The whole change as shown: before and now to the cent, the change their difference, its
    three effects rounded to add up to it (largest remainder)."""
    whole = total(drivers)
    before, now = round_money(whole.before), round_money(whole.now)
    parts = round_to([whole.volume, whole.price, whole.mix], now - before)
    return Mover((), before, now, now - before, *parts)  # type: ignore[arg-type]


def movers(drivers: list[Driver], dimensions: Sequence[str], top: int = TOP_MOVERS) -> list[Mover]:
    """The `top` groups of `dimensions` that moved most (by the size of their exact change),
    then one OTHERS row for the rest, as shown: before, now and the change add up to the
    headline's (the change shown: now shown minus before shown), each row's effects to its
    change, and each effect's column to the headline's effect (`_balance`)."""
    rows = sorted(group(drivers, dimensions), key=lambda d: (-abs(d.change), d.key(dimensions)))
    kept = rows[:top]
    names = [d.key(dimensions) for d in kept]
    if rows[top:]:
        kept.append(total(rows[top:]))
        names.append((OTHERS,))
    whole = headline(drivers)
    befores = round_to([d.before for d in kept], whole.before)
    nows = round_to([d.now for d in kept], whole.now)
    changes = round_to([d.change for d in kept], whole.change)
    exact = [[d.volume, d.price, d.mix] for d in kept]
    effects = [round_to(parts, change) for parts, change in zip(exact, changes, strict=True)]
    _balance(exact, effects, [whole.volume, whole.price, whole.mix])
    return [
        Mover(name, before, now, change, *parts)  # type: ignore[arg-type]
        for name, before, now, change, parts in zip(
            names, befores, nows, changes, effects, strict=True
        )
    ]


def _balance(exact: list[list[Decimal]], shown: list[list[Decimal]], totals: list[Decimal]) -> None:
    """Move cents between two effects of one row (its sum unchanged) until every effect's column
    adds up to its total: a column short of its total takes a cent from one over it, in the row
    where that moves each value least far from its exact amount."""
    cent = Decimal("0.01")
    while True:
        gaps = [totals[c] - sum(row[c] for row in shown) for c in range(len(totals))]
        short = next((c for c, gap in enumerate(gaps) if gap > 0), None)
        over = next((c for c, gap in enumerate(gaps) if gap < 0), None)
        if short is None or over is None:
            return
        row = max(
            range(len(shown)),
            key=lambda r: (exact[r][short] - shown[r][short]) - (exact[r][over] - shown[r][over]),
        )
        shown[row][short] += cent
        shown[row][over] -= cent
