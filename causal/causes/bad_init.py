"""Bad initialisation: weights far too large or small for the depth.

Symptoms: at step 0 the activation scale grows (or shrinks) geometrically from layer to layer;
the trouble is there from the first steps; gradients explode or vanish. Distinguished from
saturation (scale flat with depth, saturation building up later) and unscaled_inputs (the
inputs themselves are huge) by the depth trend of the first step.
Reference: He et al., "Delving Deep into Rectifiers" (ICCV 2015), section 2.2; Glorot & Bengio
(AISTATS 2010).
"""

from __future__ import annotations

import math
import statistics
from types import MappingProxyType

from causal.causes.base import FAILED_OUTCOME, CauseNode
from causal.gradient_flow import times
from causal.hypothesis import Localization
from causal.run_queries import (
    TABLE_TYPES,
    first_origin,
    layer_label,
    median_start_gain,
    param_layers,
    start_gains,
    start_stds,
    zero_init_layers,
)
from causal.schema.run import Direction, Run
from causal.symptoms.layers import LARGE_GAIN, SMALL_GAIN


class BadInit(CauseNode):
    name = "bad_init"
    prior = 0.05
    summary = "Bad weight initialisation"
    likelihoods = MappingProxyType({
        "outcome": FAILED_OUTCOME,
        "init_depth_trend": {"flat": 0.1, "growing": 0.6, "shrinking": 0.3},
        # the weights themselves far off a standard init's scale (not every bad init is in
        # the weights: a bias, a gate or a norm's scale set far off leaves them typical)
        "weight_scale": {"typical": 0.45, "small": 0.27, "large": 0.28},
        "onset": {"none": 0.05, "start": 0.7, "early": 0.2, "late": 0.05},
        "grad_regime": {"healthy": 0.1, "exploding": 0.4, "vanishing": 0.35, "both": 0.15},
        "nonfinite_birth": {"none": 0.395, "input": 0.01, "target": 0.005, "forward_op": 0.015,
                            "forward_op_on_outlier": 0.005, "forward_layer": 0.4, "loss": 0.15,
                            "backward": 0.02},
        "loss_pattern": {"steady": 0.1, "spike_recover": 0.05, "oscillating": 0.1,
                         "diverging": 0.35, "plateau": 0.35,
                         "overshoot_plateau": 0.05},
        "input_scale": {"normal": 0.9, "large": 0.07, "huge": 0.03},
        # weights far too small shrink the gradient toward the input, too large grow it
        "grad_depth": {"flat": 0.5, "vanishing_saturating": 0.05, "vanishing": 0.25,
                       "exploding": 0.2},
        # a stack initialised to nothing (or to blow-ups) passes nothing of the input on
        "loss_vs_trivial": {"below": 0.35, "at_trivial": 0.4, "above": 0.25},
    })

    def localize(self, run: Run) -> Localization:
        """Where the geometric growth (or decay) starts, from the first step's output std of
        each layer with weights over the std of what feeds it (`_factors`): the start of the
        stretch of consecutive layers (in forward order) whose factors multiply to the largest
        growth or decay (`_steepest_stretch`). A side branch that keeps its own scale (a
        time-step embedding's projection into each block) neither starts nor breaks it, and a
        single layer that is off in an otherwise ordinary network is a stretch of its own."""
        first, std, layers, input_std = _start_scales(run)
        zero, weighted = zero_init_layers(run)
        if zero:  # most weights start at exactly zero: nothing flows, whatever the scales say
            return Localization(zero[0], first, (),
                                f"{len(zero)} of {weighted} layers with weights start at zero")
        if not layers:
            return Localization(None, 0)
        known_input = input_std is not None
        steps = _factors(run, layers, std, input_std)
        if len(steps) < 2:
            # too few layers kept a finite scale on the first step to show a trend: the growth
            # overflowed inside one layer's repeated calls (a recurrence, an unrolled ODE)
            # before it could be measured; it is where the first non-finite value was born
            born = first_origin(run)
            if born is not None and born.step == first and born.layer_name in layers \
                    and born.birth.direction == Direction.FORWARD:
                return Localization(born.layer_name, first, (born,))
        # the layers with a scale factor of their own (lookup tables read ids: `_factors`)
        scaled = [a for a in layers if not _reads_ids(run, a)] or layers
        if not steps:
            return Localization(scaled[0], first, ())
        origin = _steepest_stretch(steps) or scaled[0]
        if not known_input and len(scaled) > 1 and origin == scaled[1]:
            # without the input's scale the first layer cannot be judged: growth that starts
            # between the first two layers is taken to start at the first
            origin = scaled[0]
        return Localization(_first_alike(run, origin), first, ())

    def describe(self, run: Run, loc: Localization) -> str:
        zero, weighted = zero_init_layers(run)
        if zero:
            return (f"Bad initialisation: {len(zero)} of {weighted} layers with weights start at "
                    f"exactly zero, from {layer_label(run, zero[0])} on; a layer of zero weights "
                    "outputs zeros and passes no gradient to the layers before it, so they do "
                    "not learn")
        if loc.layer and loc.evidence:  # localized where the growth overflowed
            calls = sum(1 for n in run.dag.nodes if n.module == loc.layer)
            over = f" (called {calls} times in each forward pass)" if calls > 1 else ""
            return (f"Bad initialisation: the activation scale grew past the float range in "
                    f"{layer_label(run, loc.layer)}{over} at step {loc.step or 0}, before any "
                    f"other layer's scale could show the trend")
        where = f" from {layer_label(run, loc.layer)} on" if loc.layer else ""
        gain = median_start_gain(run)
        if gain is not None and not SMALL_GAIN <= gain <= LARGE_GAIN:
            return (f"Bad initialisation: the weights start far too "
                    f"{'small' if gain < SMALL_GAIN else 'large'}{where}: their rms x "
                    f"sqrt(fan_in) is {gain:.2g} on the median layer, where PyTorch's default "
                    "init gives 0.58 and Kaiming's 1.4")
        _, std, layers, input_std = _start_scales(run)
        stretch = _stretch(_factors(run, layers, std, input_std))
        if stretch is None:
            return (f"Bad initialisation: the activation scale changes geometrically with depth"
                    f"{where} at step {loc.step or 0}")
        span, direction = stretch
        total = 10 ** abs(sum(x for _, x in span))
        per = total ** (1.0 / len(span))
        way = "grows" if direction > 0 else "shrinks"
        through = (f"through {len(span)} layers, {layer_label(run, span[0][0])} to "
                   f"{layer_label(run, span[-1][0])} (about {per:.2g}x a layer)" if len(span) > 1
                   else f"in {layer_label(run, span[0][0])}")
        # the localizer may start it earlier, at the first layer initialised alike
        start = where if loc.layer and loc.layer != span[0][0] else ""
        return (f"Bad initialisation{start}: the activation scale {way} {times(total)} "
                f"{through} at step {loc.step or 0}")

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        types = {n.module_type for n in run.dag.nodes}
        relu = bool(types & {"ReLU", "LeakyReLU", "GELU", "SiLU"})
        init = "kaiming_uniform_ (nonlinearity='relu')" if relu else "xavier_uniform_"
        if zero_init_layers(run)[0]:
            return [f"initialise those weights (torch.nn.init.{init}, or normal_(0, 0.02) in a "
                    "transformer) instead of zeros",
                    "zero only what is meant to start as an identity or a no-op (the last "
                    "projection of a residual branch, LoRA's B), never a whole path"]
        return [f"re-initialise the weights with torch.nn.init.{init}",
                "or add normalisation (LayerNorm/BatchNorm) between layers"]


def _first_alike(run: Run, layer: str) -> str:
    """The first layer (forward order) whose weights started as far off, the same way, as
    `layer`'s, when `layer`'s are off: an init applied to every layer of a kind (a loop over
    the modules, a copied recipe) starts where it is first applied, though the scale may
    move most further on (a narrow first layer's fan-in hides its gain's effect). `layer`
    itself when its weights started in the ordinary range or at exactly zero."""
    gains = start_gains(run)
    own = dict(gains).get(layer)
    if own is None or own == 0.0 or SMALL_GAIN <= own <= LARGE_GAIN:
        return layer
    large = own > LARGE_GAIN
    return next((name for name, gain in gains
                 if (gain > LARGE_GAIN if large else 0.0 < gain < SMALL_GAIN)), layer)


def _stretch(steps: list[tuple[str, float]]) -> tuple[list[tuple[str, float]], float] | None:
    """The consecutive stretch of `steps` (layer, log10 factor) with the largest total growth
    or decay (the maximum-sum run, over both signs; the earlier one on a tie), from its first
    layer that moves the scale by at least half the stretch's median factor (a layer near its
    right scale in front of the stretch does not start it), and its direction (+1 growth, -1
    decay). None when no factor moves the scale at all."""
    best, span, direction = 0.0, (0, 0), 1.0
    for sign in (1.0, -1.0):
        total, first = 0.0, 0
        for i, (_, x) in enumerate(steps):
            if total <= 0.0:
                total, first = 0.0, i
            total += sign * x
            if total > best + 1e-12:
                best, span, direction = total, (first, i + 1), sign
    if best <= 0.0:
        return None
    stretch = steps[span[0]:span[1]]
    typical = statistics.median(direction * x for _, x in stretch)
    start = next(k for k, (_, x) in enumerate(stretch) if direction * x >= typical / 2)
    return stretch[start:], direction


def _steepest_stretch(steps: list[tuple[str, float]]) -> str | None:
    """Where `_stretch` begins: the layer the growth or decay starts at (None: no stretch)."""
    stretch = _stretch(steps)
    return stretch[0][0][0] if stretch else None


def _start_scales(run: Run) -> tuple[int, dict[str, float], list[str], float | None]:
    """What the scale factors are read from: the first recorded step, each layer's output std
    there (`start_stds`), the layers with weights that keep a scale of their own
    (`_own_scale`) and the input batch's std on that step (None when not recorded)."""
    first, std = start_stds(run)
    return (first, std, _own_scale(param_layers(run), std),
            dict(run.series.get("input_std")).get(first))


def _own_scale(layers: list[str], std: dict[str, float]) -> list[str]:
    """`layers` without the blocks that return what one of their inner layers computed (a
    block that owns a parameter itself, such as a GIN layer's eps, and ends in a child
    module): the block's output is that layer's, so its scale (`std`: first-step output stds)
    says nothing of its own. A block that transforms its inner layers' output (a layer-scale
    gamma) keeps its place."""
    return [a for a in layers if a not in std or not any(
        b != a and (a == "" or b.startswith(a + ".")) and math.isclose(v, std[a], rel_tol=1e-6)
        for b, v in std.items())]


def _factors(run: Run, layers: list[str], std: dict[str, float],
             input_std: float | None) -> list[tuple[str, float]]:
    """(layer, log10 of its scale factor) for the layers with weights, in forward order: the
    layer's output std on the first step over the largest output std among the layers with
    weights that feed it in the layer DAG (`_feeding_stds`: a cross-attention's output over its
    keys and values, a residual block's over its stream), or over the input batch's for the
    first layer. A later layer fed by no layer (a query projection of a learned latent array)
    reads a parameter of unknown scale and is left out, and so is a lookup table (an
    embedding reads ids, not values: its scale is no factor of anything it is fed; it only
    feeds the layers after it). Without DAG edges, each layer is fed by the previous one.
    `std`: the layers' first-step output stds (`start_stds`)."""
    edges = bool(run.dag.edges)
    out: list[tuple[str, float]] = []
    prev = input_std
    for k, layer in enumerate(layers):
        v = std.get(layer)
        if v is None:
            continue
        if _reads_ids(run, layer):
            prev = v
            continue
        if edges:
            fed = _feeding_stds(run, layer, std)
            src = max(fed) if fed else (input_std if k == 0 else None)
        else:
            src = prev
        if src is not None and src > 0:
            out.append((layer, math.log10(v / src)))
        prev = v
    return out


def _reads_ids(run: Run, layer: str) -> bool:
    """A lookup table (an embedding): it reads ids, not values, so its scale is no gain."""
    node = run.dag.node(layer)
    return node is not None and node.module_type in TABLE_TYPES


def _feeding_stds(run: Run, layer: str, std: dict[str, float]) -> list[float]:
    """The first-step output stds of the nearest layers with weights upstream of `layer`
    (through layers without weights, as the previous-layer rule compares like with like: an
    activation in between is part of the factor)."""
    found: list[float] = []
    seen: set[str] = set()
    todo = list(run.dag.predecessors(layer))
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        node = run.dag.node(p)
        if node is not None and node.param_count > 0:
            if p in std:
                found.append(std[p])
        else:
            todo += run.dag.predecessors(p)
    return found
