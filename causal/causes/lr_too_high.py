"""Learning rate too high: every update overshoots.

Symptoms: update-to-weight ratios far above about 1e-3; gradients explode; the loss oscillates
or diverges; the trouble starts early, with ordinary inputs and a flat activation scale at
step 0. Distinguished from bad_init (trouble at step 0, scale grows with depth) and
unscaled_inputs (huge inputs) by normal data and init with oversized updates.
Reference: Karpathy, "A Recipe for Training Neural Networks" (2019), update/weight ratio ~1e-3;
Goodfellow et al., Deep Learning (2016), section 8.3 (learning-rate choice).
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import NamedTuple

from causal.causes.base import FAILED_OUTCOME, CauseNode
from causal.hypothesis import Localization
from causal.localize import first_cause
from causal.run_queries import failure_step, finite, lr_settings, update_ratios
from causal.schema.run import Run, State
from causal.symptoms.optimizer import optimizer_of


def _lrs(run: Run, until: int | None = None) -> dict[int, float]:
    """The learning rate of each param group, as last set at or before step `until`."""
    return dict(lr_settings(run, until))


#: How many times the learning rate of every other param group one group's must be for a
#: failure of too large steps to be put in that group's modules.
HOT_GROUP_FACTOR = 3.0


class HotGroup(NamedTuple):
    """A param group whose learning rate stands out: its index, lr, how many times the
    largest other group's lr it is, and the modules it updates."""

    group: int
    lr: float
    factor: float
    modules: tuple[str, ...]


def _hot_group(run: Run, lrs: dict[int, float]) -> HotGroup | None:
    """Among the groups' learning rates `lrs` (`_lrs`), the param group whose lr is at least
    HOT_GROUP_FACTOR times every other group's (a head trained 10x faster than its backbone),
    with the modules it updates (as the monitor recorded them: `lr_group/<i>`); None with a
    single group, or none that stands out."""
    lrs = {g: lr for g, lr in lrs.items() if math.isfinite(lr) and lr > 0}
    if len(lrs) < 2:
        return None
    hot = max(lrs, key=lrs.__getitem__)
    rest = max(lr for g, lr in lrs.items() if g != hot)
    if lrs[hot] < HOT_GROUP_FACTOR * rest:
        return None
    modules: tuple[str, ...] = ()
    for ch in run.settings:
        if ch.key == f"lr_group/{hot}":
            modules = tuple(ch.value.split())
    return HotGroup(hot, lrs[hot], lrs[hot] / rest, modules)


class LrTooHigh(CauseNode):
    name = "lr_too_high"
    prior = 0.08
    summary = "Learning rate too high"
    likelihoods = MappingProxyType({
        "outcome": FAILED_OUTCOME,
        "update_ratio": {"normal": 0.1, "high": 0.4, "very_high": 0.5},
        # the lr itself, against its optimizer's usual range (too high for this model can
        # still be a usual value)
        "lr_level": {"typical": 0.2, "high": 0.4, "very_high": 0.4},
        "loss_pattern": {"steady": 0.05, "spike_recover": 0.1, "oscillating": 0.3,
                         "diverging": 0.45, "plateau": 0.03,
                         "overshoot_plateau": 0.07},
        "grad_regime": {"healthy": 0.15, "exploding": 0.6, "vanishing": 0.1, "both": 0.15},
        "nonfinite_birth": {"none": 0.295, "input": 0.01, "target": 0.005, "forward_op": 0.025,
                            "forward_op_on_outlier": 0.005, "forward_layer": 0.4, "loss": 0.2,
                            "backward": 0.06},
        "onset": {"none": 0.05, "start": 0.15, "early": 0.6, "late": 0.2},
        "input_outlier": {"none": 0.97, "outlier": 0.02, "nonfinite": 0.005,
                          "nonfinite_target": 0.005},
        "input_scale": {"normal": 0.9, "large": 0.07, "huge": 0.03},
        "init_depth_trend": {"flat": 0.9, "growing": 0.05, "shrinking": 0.05},
        "grad_depth": {"flat": 0.85, "vanishing_saturating": 0.02, "vanishing": 0.08,
                       "exploding": 0.05},
        # far too large steps blow up first, or raise the loss gradually
        "loss_jump": {"none": 0.6, "on_calm_weights": 0.1, "after_trouble": 0.3},
        # far too large steps throw the model above what a constant scores, or kill it
        "loss_vs_trivial": {"below": 0.35, "at_trivial": 0.3, "above": 0.35},
    })

    def localize(self, run: Run) -> Localization:
        """The layer whose gradient explodes first (earliest in forward order on ties), or
        the layer with the largest update ratio; among the modules of a param group whose
        learning rate stands out (`_hot_group`) when any of them is in trouble: where the
        steps are too large, not where the gradients they cause show first."""
        stop = failure_step(run)
        hot = _hot_group(run, _lrs(run, stop))
        modules = set(hot.modules) if hot is not None else set()

        def in_hot(layer: str) -> bool:
            node = run.dag.node(layer)
            return layer in modules or (node is not None and node.module in modules)

        grads = [e for e in run.events if e.to_state == State.GRAD_EXPLODING
                 and (stop is None or e.step <= stop)]
        note = ""
        if hot is not None and (hot_grads := [e for e in grads if in_hot(e.layer_name)]):
            grads = hot_grads
            note = f"param group {hot.group} has {hot.factor:.3g}x the learning rate of the others"
        if grads:
            lead, coupling = first_cause(run, grads)
            assert lead is not None
            chain = (lead, *(e for e in grads if e.step == lead.step and e is not lead))
            return Localization(lead.layer_name, lead.step, chain,
                                "; ".join(n for n in (note, coupling) if n))
        ratios = update_ratios(run, until=stop)
        if hot is not None and any(in_hot(k) for k in ratios):
            ratios = {k: v for k, v in ratios.items() if in_hot(k)}
        best = max(ratios, default=None, key=lambda k: max(finite(v for _, v in ratios[k]),
                                                           default=0.0))
        return Localization(best, stop, ())

    def describe(self, run: Run, loc: Localization) -> str:
        lrs = _lrs(run, loc.step)
        hot = _hot_group(run, lrs)
        if hot is not None:
            lr = f" (lr {hot.lr:g} on param group {hot.group}, {hot.factor:.3g}x the others)"
        else:
            lr = f" (lr {lrs[0]:g}{_against_usual(run, lrs[0])})" if 0 in lrs else ""
        where = f", first visible in {loc.layer!r}" if loc.layer else ""
        when = f" at step {loc.step}" if loc.step is not None else ""
        return f"Learning rate too high{lr}: updates overshoot{where}{when}"

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        lrs = _lrs(run, loc.step)
        out = []
        hot = _hot_group(run, lrs)
        if hot is not None:
            shown = ", ".join(hot.modules[:4]) + (" ..." if len(hot.modules) > 4 else "")
            modules = f" ({shown})" if shown else ""
            out.append(f"param group {hot.group}{modules} trains at lr {hot.lr:g}, "
                       f"{hot.factor:.3g}x the other groups: lower its lr (or its multiplier) "
                       "first")
        for group, lr in sorted(lrs.items()):
            if math.isfinite(lr) and lr > 0:
                out.append(f"lr is {lr:g} on param group {group}: try {lr / 10:g} with warmup")
        if not out:
            out.append("lower the learning rate 10x and add a warmup")
        out.append("clip the gradient norm (torch.nn.utils.clip_grad_norm_) while tuning")
        return out


def _against_usual(run: Run, lr: float) -> str:
    """How `lr` stands against its optimizer family's usual range (`lr_level`), as a clause:
    above it, or within it and still too large for this model; empty for an unknown family."""
    optimizer = optimizer_of(run)
    if optimizer is None or not math.isfinite(lr) or lr <= 0:
        return ""
    name, high, _ = optimizer
    if lr >= high:
        return f", above {name}'s usual range: high from {high:g}"
    return f", a usual lr for {name}, too large for this model"
