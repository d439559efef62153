"""Shadow decisions for the simulator (SPEC 11): a candidate endpointing model, `eou-v2`, runs
beside production on every turn and records what it would have decided (`turn.shadow`).

The candidate is the same on every tenant but the lines are not: on the first catalogue tenant
(clean lines) it endpoints faster and lets 60% of production's false interruptions play out; on
the second (noisy lines) it is as fast but cuts in on one turn in eight where production did
not. Elsewhere it behaves like production, give or take 5% of endpointing. So a demo shows a
`switch` verdict for one tenant and a `keep` for another.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CANDIDATE = "eou-v2"
KIND = "endpointing"


@dataclass(frozen=True)
class ShadowBehaviour:
    endpointing_factor: float  # candidate / production endpointing, before +/-5% noise
    avoided_false_share: float  # of production's false interruptions the candidate lets play
    added_false_rate: float  # of the turns production let play that the candidate cuts


NEUTRAL = ShadowBehaviour(1.0, 0.0, 0.0)
# By catalogue index: tenant 0 (acme-telecom) gains, tenant 1 (bright-bank) loses.
BEHAVIOURS: tuple[ShadowBehaviour, ...] = (
    ShadowBehaviour(0.85, 0.6, 0.0),
    ShadowBehaviour(0.85, 0.0, 0.125),
)


@dataclass(frozen=True)
class ShadowDecisions:
    endpointing_us: np.ndarray  # integer microseconds (the contract carries milliseconds)
    would_interrupt: np.ndarray
    is_false_interruption: np.ndarray  # meaningful only where would_interrupt


def shadow_decisions(
    rng: np.random.Generator,
    tenant: np.ndarray,
    endpointing_ms: np.ndarray,
    interrupted: np.ndarray,
    false_interruption: np.ndarray,
) -> ShadowDecisions:
    """The candidate's decision on each turn (arrays indexed like the generator's turns).

    `rng` is a stream of its own, so the shadow never changes the production traffic.
    """
    total = len(tenant)
    count = int(tenant.max()) + 1 if total else 0
    behaviours = [BEHAVIOURS[i] if i < len(BEHAVIOURS) else NEUTRAL for i in range(count)]
    factor = np.array([b.endpointing_factor for b in behaviours])[tenant]
    avoided = np.array([b.avoided_false_share for b in behaviours])[tenant]
    added = np.array([b.added_false_rate for b in behaviours])[tenant]
    noise = rng.uniform(0.95, 1.05, total)
    endpointing_us = np.maximum(1, np.round(endpointing_ms * factor * noise * 1000)).astype(
        np.int64
    )
    production_false = interrupted & false_interruption
    lets_play = production_false & (rng.random(total) < avoided)
    cuts_in = ~interrupted & (rng.random(total) < added)
    would_interrupt = (interrupted & ~lets_play) | cuts_in
    is_false = (production_false & ~lets_play) | cuts_in
    return ShadowDecisions(endpointing_us, would_interrupt, is_false)
