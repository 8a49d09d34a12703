"""The verdict on a run: whether it is failing, and which single cause is its root.

The network's marginals say, for each cause, "is it present?". Causes are independent roots in
the network, so evidence that fits two causes at once (a too high lr and the ReLUs it killed)
leaves both near 1, and ranking by marginals would report the first of them at 0.98 although
the evidence cannot tell them apart. A run fails for one root cause, so the report asks two
questions instead: is something wrong (the largest marginal, calibrated: `failing`), and if so,
which one cause explains the evidence (`CausalNetwork.root_shares`: each cause alone against
none). A cause's root confidence is P(failing) times its share, so the root confidences add up
to P(failing): two causes the evidence fits equally share it, and neither is reported as
certain.

Two additions, both for runs unlike the ones the tables were fitted on. The shares are tempered
by a fitted temperature (`tempered`). And a run may fail for a reason outside the catalogue: an
`UNEXPLAINED` alternative competes with the causes for the share, explaining how the loss ended
(the `outcome` symptom) and nothing else (every other symptom as with no cause). A run whose
symptoms no cause predicts is then reported with its root cause unsure (when it is failing at
all), not with the least bad cause at 0.8 (a stalled layer with a normal share of zero units
blamed on dead ReLUs).

A floor on P(failing) at P(stalled) was tried and dropped: a loss that does not fall is no
failure when it is not a distance to a target (a GAN generator's loss rises as its
discriminator learns): it raised two false alarms, on the DCGAN of `benchmarks/real_programs.py`
(already one, at 0.64; then 1.00) and on the GAN of `tests/test_model_patterns.py`. A stall no
cause explains keeps its healthy verdict, which says so first (`Stalled, cause unclear`).

Measured leave-one-family-out on the 948 fitted runs (`neuraldbg fit`), against ranking
by the calibrated marginals: top-1 0.91 both, wrong top-1 answers above 0.9 confidence 9
instead of 21 (above 0.95: 2 instead of 8), Brier 0.016 instead of 0.023, ECE 0.043 instead of
0.029.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from causal.network import normalised

if TYPE_CHECKING:
    from causal.network import CausalNetwork


#: The prior of a failure from a cause outside the catalogue, and how such a run ends (the
#: `outcome` symptom's states). Hand-set: the fitted runs all have a catalogued cause, so they
#: cannot price it (leave-one-family-out, a prior of 0.005-0.05 moves top-1 by nothing and the
#: log-loss by under 0.01); it matters on a run whose symptoms no cause predicts.
UNEXPLAINED = "unexplained"
UNEXPLAINED_PRIOR = 0.01
UNEXPLAINED_OUTCOME = MappingProxyType({"learned": 0.05, "stalled": 0.75, "nonfinite": 0.2})
OUTCOME = "outcome"


@dataclass(frozen=True)
class Verdict:
    """`failing`: calibrated P(the run is failing); `present`: calibrated P(cause present)
    per cause; `root`: calibrated P(cause is the run's root cause) per cause; `unexplained`:
    P(failing for a cause outside the catalogue). `root` and `unexplained` add up to
    `failing`."""

    failing: float
    present: Mapping[str, float]
    root: Mapping[str, float]
    unexplained: float = 0.0


def tempered(shares: Mapping[str, float], temperature: float) -> dict[str, float]:
    """`shares` to the power 1 / `temperature`, renormalised (1: unchanged; larger: flatter)."""
    if temperature == 1.0:
        return dict(shares)
    weights = {c: max(s, 1e-300) ** (1.0 / temperature) for c, s in shares.items()}
    z = math.fsum(weights.values())
    return {c: w / z for c, w in weights.items()}


def judge(present: Mapping[str, float], log_odds: Mapping[str, float],
          evidence: Mapping[str, Mapping[str, float]], outcome_none: Mapping[str, float] | None,
          share_temperature: float = 1.0) -> Verdict:
    """The `Verdict` from the calibrated marginals `present`, the causes' single-fault
    `log_odds` (`CausalNetwork.root_log_odds`), the `evidence` (its `outcome`) and the outcome's
    distribution with no cause (`outcome_none`; None, or no outcome in the evidence: no
    unexplained alternative)."""
    failing = max(present.values(), default=0.0)
    outcome = evidence.get(OUTCOME)
    logs = dict(log_odds)
    if outcome is not None and outcome_none is not None:
        fit = math.fsum(UNEXPLAINED_OUTCOME.get(s, 0.0) * p for s, p in outcome.items())
        none = math.fsum(outcome_none.get(s, 0.0) * p for s, p in outcome.items())
        logs[UNEXPLAINED] = (math.log(UNEXPLAINED_PRIOR) - math.log1p(-UNEXPLAINED_PRIOR)
                             + math.log(max(fit, 1e-300)) - math.log(max(none, 1e-300)))
    shares = tempered(normalised(logs), share_temperature)
    root = {c: failing * shares.get(c, 0.0) for c in present}
    return Verdict(failing, MappingProxyType(dict(present)), MappingProxyType(root),
                   failing * shares.get(UNEXPLAINED, 0.0))


def verdict(network: CausalNetwork, evidence: Mapping[str, Mapping[str, float]],
            calibrate: Callable[[Mapping[str, float]], dict[str, float]] = dict,
            share_temperature: float = 1.0) -> Verdict:
    """The `Verdict` of `evidence` under `network`, the marginals mapped by `calibrate`
    (default: none), the root shares tempered by `share_temperature` (`tempered`)."""
    present = calibrate(network.posteriors(evidence))
    return judge(present, network.root_log_odds(evidence), evidence,
                 network.none_column(OUTCOME), share_temperature)
