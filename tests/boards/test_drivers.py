"""What drove a change (issue 27 point 3): the cost change split into volume, price and mix per cell,
against a fixture worked out by hand, and the shown parts adding up to the shown change."""

from __future__ import annotations

from decimal import Decimal

from ledger.core.numbers import round_to
from ledger.serving.drivers import (
    OTHERS,
    UNATTRIBUTED,
    Driver,
    Mover,
    decompose,
    group,
    headline,
    movers,
    total,
)

D = Decimal

# cells_sql's rows: period, tenant, component, provider, model, meter, cache hit, quantity, cost,
# lowest and highest unit price, the tenant's billable minutes and cost in that period.
# Tenant a: 100 billable minutes before, 120 now; its sessions cost 0.05 more than their priced
# lines in both periods (the unattributed cell). Tenant b is new: 30 minutes now.
ROWS = [
    # a's LLM input: 1,000 tokens at 0.002 before; 1,500 at 0.0025 now (the rate card rose).
    (0, "a", "llm", "openai", "gpt", "llm.input_tokens", False, D(1000), D("2.000"), D("0.002"),
     D("0.002"), D(100), D("2.35")),
    (1, "a", "llm", "openai", "gpt", "llm.input_tokens", False, D(1500), D("3.75"), D("0.0025"),
     D("0.0025"), D(120), D("3.80")),
    # a's TTS: 3,000 characters at 0.0001 before, none now.
    (0, "a", "tts", "aliyun", "cosy", "tts.characters", False, D(3000), D("0.3"), D("0.0001"),
     D("0.0001"), D(100), D("2.35")),
    # b's ASR: 600 seconds at 0.0003, new.
    (1, "b", "asr", "deepgram", "nova", "asr.seconds", False, D(600), D("0.18"), D("0.0003"),
     D("0.0003"), D(30), D("0.18")),
    # The tenants' own rows (minutes and cost of every period they have sessions in).
    (0, "a", None, None, None, None, None, None, None, None, None, D(100), D("2.35")),
    (1, "a", None, None, None, None, None, None, None, None, None, D(120), D("3.80")),
    (1, "b", None, None, None, None, None, None, None, None, None, D(30), D("0.18")),
]  # fmt: skip


def test_each_cell_splits_into_volume_price_and_mix_as_worked_out_by_hand() -> None:
    assert decompose(ROWS) == [
        # volume 2.000 x (120 - 100) / 100 = 0.4; price 1,500 x (0.0025 - 0.002) = 0.75;
        # mix 1.75 - 0.4 - 0.75 = 0.6.
        Driver("a", "llm", "openai", "gpt", D("2.000"), D("3.75"), D("0.4"), D("0.75"), D("0.6")),
        # Gone: volume 0.3 x 0.2 = 0.06, no price now, mix -0.3 - 0.06 = -0.36.
        Driver("a", "tts", "aliyun", "cosy", D("0.3"), D(0), D("0.06"), D(0), D("-0.36")),
        # 2.35 - 2.30 before and 3.80 - 3.75 now: no change.
        Driver("a", UNATTRIBUTED, "", "", D("0.05"), D("0.05"), D(0), D(0), D(0)),
        # New tenant, no minutes before: all mix.
        Driver("b", "asr", "deepgram", "nova", D(0), D("0.18"), D(0), D(0), D("0.18")),
    ]
    whole = total(decompose(ROWS))
    # The headline: the tenants' cost 2.35 -> 3.98, +1.63 = 0.46 + 0.75 + 0.42.
    assert (whole.before, whole.now, whole.change) == (D("2.35"), D("3.98"), D("1.63"))
    assert (whole.volume, whole.price, whole.mix) == (D("0.46"), D("0.75"), D("0.42"))
    assert [(g.tenant_id, g.change) for g in group(decompose(ROWS), ["tenant_id"])] == [
        ("a", D("1.45")),
        ("b", D("0.18")),
    ]


def test_the_parts_sum_to_the_change_exactly_when_volume_is_a_repeating_decimal() -> None:
    # 3 minutes -> 4: the volume effect of 1.00 is 1/3, kept to 12 places; mix is the rest.
    rows = [
        (0, "a", "llm", "p", "m", "llm.output_tokens", False, D(100), D("1.00"), D("0.01"),
         D("0.01"), D(3), D("1.00")),
        (1, "a", "llm", "p", "m", "llm.output_tokens", False, D(150), D("1.50"), D("0.01"),
         D("0.01"), D(4), D("1.50")),
    ]  # fmt: skip
    (driver,) = decompose(rows)
    assert driver.volume == D("0.333333333333")
    assert driver.price == D(0)  # the rate card did not move: exactly nothing
    assert driver.mix == D("0.166666666667")
    assert driver.volume + driver.price + driver.mix == driver.change == D("0.50")


def test_the_shown_parts_add_up_to_the_shown_change_to_the_cent() -> None:
    # Before 10.004 (shown 10.00), now 10.016 (shown 10.02): the change shown is +0.02, while
    # the parts 0.004 + 0.004 + 0.004 round to 0.00 each; the largest remainders move.
    assert round_to([D("0.004"), D("0.004"), D("0.004")], D("0.02")) == [
        D("0.01"),
        D("0.01"),
        D("0.00"),
    ]
    # Per-tenant changes add up to the headline (-68.34 vs -68.35 before, issue 27 point 7).
    assert round_to([D("-30.173"), D("-38.174")], D("-68.35")) == [D("-30.17"), D("-38.18")]


def test_the_top_movers_and_the_rest_add_up_to_the_headline_as_shown() -> None:
    drivers = decompose(ROWS)
    assert headline(drivers) == Mover((), D("2.35"), D("3.98"), D("1.63"), D("0.46"), D("0.75"),
                                      D("0.42"))  # fmt: skip
    # Tenant a moved most; b is the rest.
    assert movers(drivers, ["tenant_id"], top=1) == [
        Mover(("a",), D("2.35"), D("3.80"), D("1.45"), D("0.46"), D("0.75"), D("0.24")),
        Mover((OTHERS,), D("0.00"), D("0.18"), D("0.18"), D("0.00"), D("0.00"), D("0.18")),
    ]
