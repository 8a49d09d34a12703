"""How the gradient flows through the depth at the start of a run, read from the first steps with
full statistics (per-layer gradients and activations).

Two readings along the layer graph's longest path (`main_path_layers`, lookups left out):

* the **attenuation**: log10 of the last layer's gradient norm over the first layer's. A
  gradient that shrinks by decades on its way back to the input leaves the first layers
  untrained (Glorot & Bengio, AISTATS 2010; Hochreiter, 1991);
* the **saturating gains**: for each sigmoid or tanh layer between them, log10 of the mean
  derivative of its outputs, computed exactly from their mean m and std s: a sigmoid's
  derivative is a(1 - a), so its mean is m - (s^2 + m^2); a tanh's is 1 - a^2, mean
  1 - (s^2 + m^2). Their sum is how much those layers alone scale the gradient down: at most
  0.25 per sigmoid, near 1 per tanh in its linear range, near 0 per saturated one.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from causal.run_queries import forward_order, layer_series, main_path_layers
from causal.schema.run import ActivationKind, LayerStat, Run

#: Module types that look an index up (their gradient is sparse, not part of the depth).
LOOKUPS = frozenset({"Embedding", "EmbeddingBag"})
#: How many of the first full-statistics steps the readings use.
START_STEPS = 3
#: The smallest mean derivative counted (a fully saturated layer passes ~0).
MIN_GAIN = 1e-6
#: Decades by which the gradient must shrink (or grow) from the last layer of the path to the
#: first to count as vanishing (exploding) at the start.
ATTENUATION = 1.5
#: Decades by which the sigmoid/tanh layers alone must scale the gradient down for them to be
#: what made it vanish.
SATURATING_LOSS = 1.5


@dataclass(frozen=True)
class StartGradients:
    """The readings of the first steps: `attenuation` (log10 last / first gradient norm along
    the longest path; > 0 when the gradient shrinks toward the input), the `layers` it spans
    (forward order), and `gains`: (layer, log10 mean derivative) of every sigmoid or tanh
    layer in that span, in forward order."""

    attenuation: float
    layers: tuple[str, ...]
    gains: tuple[tuple[str, float], ...]

    @property
    def saturating_loss(self) -> float:
        """log10 of the factor by which the sigmoid/tanh layers scale the gradient (<= 0)."""
        return math.fsum(g for _, g in self.gains)

    @property
    def regime(self) -> str:
        """"vanishing_saturating" (the gradient shrinks by ATTENUATION decades toward the input
        and the sigmoid/tanh layers alone scale it down by SATURATING_LOSS), "vanishing",
        "exploding" (it grows toward the input) or "flat"."""
        if self.attenuation >= ATTENUATION:
            if self.saturating_loss <= -SATURATING_LOSS:
                return "vanishing_saturating"
            return "vanishing"
        return "exploding" if self.attenuation <= -ATTENUATION else "flat"


def start_steps(run: Run) -> set[int]:
    """The first START_STEPS steps at which layer gradients were recorded (the steps with full
    statistics)."""
    steps = sorted({s for pts in layer_series(run, LayerStat.GRAD_NORM).values()
                    for s, _ in pts})
    return set(steps[:START_STEPS])


def _median(points: Iterable[tuple[int, float]], steps: set[int]) -> float | None:
    vals = [v for s, v in points if s in steps and math.isfinite(v)]
    return statistics.median(vals) if vals else None


def start_gradients(run: Run) -> StartGradients | None:
    """The readings, or None when fewer than three layers along the path had a gradient."""
    steps = start_steps(run)
    if not steps:
        return None
    grads = layer_series(run, LayerStat.GRAD_NORM)
    path = []
    for name in main_path_layers(run):
        node = run.dag.node(name)
        if node is None or node.module_type in LOOKUPS:
            continue
        g = _median(grads.get(name, ()), steps)
        if g is not None and g > 0:
            path.append((name, g))
    if len(path) < 3:
        return None
    order = forward_order(run)
    lo, hi = order.get(path[0][0], 0), order.get(path[-1][0], 1 << 30)
    means, stds = layer_series(run, LayerStat.ACT_MEAN), layer_series(run, LayerStat.ACT_STD)
    gains = []
    for node in sorted(run.dag.nodes, key=lambda n: order.get(n.name, 1 << 30)):
        if node.activation_kind != ActivationKind.SATURATING \
                or not lo <= order.get(node.name, -1) <= hi:
            continue
        m, s = _median(means.get(node.name, ()), steps), _median(stds.get(node.name, ()), steps)
        gain = _mean_derivative(node.module_type, m, s)
        if gain is not None:
            gains.append((node.name, math.log10(max(gain, MIN_GAIN))))
    return StartGradients(math.log10(path[-1][1] / path[0][1]), tuple(n for n, _ in path),
                          tuple(gains))


def _mean_derivative(module_type: str, mean: float | None, std: float | None) -> float | None:
    """The mean derivative of a sigmoid or tanh layer from its outputs' mean and std (None for
    other saturating types, whose outputs do not give it)."""
    if mean is None or std is None:
        return None
    second = std * std + mean * mean  # E[a^2]
    kind = module_type.lower()
    if kind == "sigmoid":
        return mean - second
    if kind == "tanh":
        return 1.0 - second
    return None


def times(factor: float) -> str:
    """A factor as people read it: "37x", "1,210x", "2.4e+07x"."""
    if factor < 10:
        return f"{factor:.2g}x"
    return f"{factor:,.0f}x" if factor < 1e6 else f"{factor:.2g}x"
