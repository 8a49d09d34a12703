"""Symptoms of how and when the run failed: the first non-finite value, the onset, the loss."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping
from types import MappingProxyType

from causal.run_queries import (
    HEAD_STEPS,
    HIGH_UPDATE_RATIO,
    STALL_MIN_STEPS,
    born_in_found_targets,
    broke_on_extreme_batch,
    first_origin,
    half_dtypes,
    layer_series,
    loss_level_unreadable,
    loss_tail,
    losses,
    nonfinite_step,
    run_length,
    trouble_events,
    update_ratio_medians,
)
from causal.schema.run import Direction, EventKind, LayerStat, Run, State
from causal.symptoms.base import Symptom


class NonfiniteBirth(Symptom):
    """Where the first non-finite value was born. A parameterless op (log, sqrt, div) on finite
    inputs points at an unsafe op; a layer with weights at values grown too large, unless its
    outputs were of ordinary size just before (then an op inside it). In the data: `input`;
    in targets the monitor found in the loss's graph rather than was given, `target`: those
    are the labels or a value the loss computed from them (a division by a flat group's zero
    spread), so a corrupt label and an unsafe op in the loss both show it. An op that broke on
    the step an extreme batch entered, or one of a sign its data never had
    (`broke_on_extreme_batch`: an exp of a 1e4 reading, the log of a -999 sentinel), is its own
    state, `forward_op_on_outlier`: the op kept to the data's range until the batch left it."""

    name = "nonfinite_birth"
    states = ("none", "input", "target", "forward_op", "forward_op_on_outlier", "forward_layer",
              "loss", "backward")
    description = "where the first inf/NaN appeared"
    leak = MappingProxyType({"none": 0.9, "input": 0.015, "target": 0.005, "forward_op": 0.015,
                             "forward_op_on_outlier": 0.005, "forward_layer": 0.02, "loss": 0.02,
                             "backward": 0.02})

    def observe(self, run: Run) -> Mapping[str, float]:
        where = dict(self._where(run))
        if where.get("forward_op") and broke_on_extreme_batch(run):
            where["forward_op_on_outlier"] = where.pop("forward_op")
        return where

    def _where(self, run: Run) -> Mapping[str, float]:
        """The state by where the origin was born alone."""
        ev = first_origin(run)
        if ev is None:
            return self.hard("none")
        direction = ev.birth.direction
        if direction == Direction.INPUT:
            return self.hard("target" if born_in_found_targets(run, ev) else "input")
        if direction == Direction.LOSS:
            return self.hard("loss")
        if direction == Direction.BACKWARD:
            return self.hard("backward")
        node = run.dag.node(ev.layer_name)
        has_params = ev.birth.has_params
        if has_params is None:
            has_params = node is not None and node.param_count > 0
        if has_params:
            before = _last_magnitude(run, ev.layer_name, ev.step)
            if before is not None and before < ORDINARY and not half_dtypes(run):
                # a layer whose outputs were of ordinary size just before cannot have grown
                # to the float32 maximum: an op inside it (its own log, division, exp) did it
                return {"forward_op": 0.7, "forward_layer": 0.3}
            return self.hard("forward_layer")
        if ev.birth.inputs_finite is False:
            return {"forward_layer": 0.6, "forward_op": 0.4}
        return self.hard("forward_op")


#: Largest |activation| still called ordinary: a float32 overflow through weights needs ~1e38.
ORDINARY = 100.0
#: How far back the last recorded activation of the origin layer may be, in steps.
RECENT = 10


def _last_magnitude(run: Run, layer: str, step: int) -> float | None:
    """The layer's largest |output| at its last recorded step before `step` (within RECENT
    steps), or None when it was not recorded then."""
    pts = [(s, v) for s, v in layer_series(run, LayerStat.ACT_MAX_ABS, until=step - 1).get(
        layer, []) if math.isfinite(v) and s >= step - RECENT]
    return pts[-1][1] if pts else None


def _finite_losses(run: Run, until: float = math.inf) -> list[float]:
    return [v for s, v in losses(run) if s < until and math.isfinite(v)]


def _never_improved(vals: list[float]) -> bool:
    """The finite losses `vals` (at least 10) never fell below 0.9x their start: the run was
    failing (stalled or worse) from the first step, before any transition said so."""
    if len(vals) < 10:
        return False
    start = min(vals[:3])  # not their mean: the first updates may throw the loss up
    if not start > 0 or min(vals[3:]) < 0.9 * start:
        return False
    # a slow but steady decrease is progress too (a task that learns slowly, then fails),
    # measured from the untrained model's loss when the first updates threw the loss up
    k = len(vals) // 3
    return statistics.fmean(vals[-k:]) >= 0.97 * min(statistics.fmean(vals[:k]), vals[0])


def _no_progress(vals: list[float]) -> bool:
    """The last fifth of the losses is not 5% below the first fifth, nor below the untrained
    model's loss (any of the first three: a loss thrown up by the first updates and fallen back
    to where it began inflates the first fifth, as an adaptive optimizer's far too large first
    steps do before the model sits at chance)."""
    if len(vals) < 20:
        return False
    head = _head(vals)
    return head > 0 and _last_fifth(vals) > 0.95 * head


def _last_fifth(vals: list[float]) -> float:
    """The mean of the last fifth of the (at least 5) losses `vals`: where they ended."""
    return statistics.fmean(vals[-(len(vals) // 5):])


def _head(vals: list[float]) -> float:
    """Where the losses began: the mean of their first fifth, or the untrained model's loss
    (any of the first three) when that is lower (`_no_progress`)."""
    return min(statistics.fmean(vals[:len(vals) // 5]), *vals[:3])


def _flat_from_start(vals: list[float]) -> bool:
    """The running mean of the losses (over a tenth of the run, at least 20 of them) never
    came 15% below where they began (`_head`): one lucky minibatch of a loss that jitters by
    10-20% around its untrained level is not an improvement (`_never_improved` would count it
    as one)."""
    if len(vals) < 20:
        return False
    w = len(vals) // 10
    sums = list(itertools.accumulate(vals, initial=0.0))
    low = min((sums[i + w] - sums[i]) / w for i in range(len(vals) - w + 1))
    return low >= 0.85 * _head(vals)


class Onset(Symptom):
    """When trouble started: at the very start (steps 0-2: init, unscaled data; or a loss that
    never improved before the first transition, or never made progress at all without one),
    early, or late in an otherwise calm run (outlier batch, unsafe op, slow drift)."""

    name = "onset"
    states = ("none", "start", "early", "late")
    description = "when the first abnormal transition happened"
    leak = MappingProxyType({"none": 0.85, "start": 0.05, "early": 0.05, "late": 0.05})

    def observe(self, run: Run) -> Mapping[str, float]:
        trouble = trouble_events(run)
        if not trouble:  # no transition, yet a run that never made progress failed at once
            if loss_level_unreadable(run):
                return self.hard("none")  # no progress to judge on a loss without a level
            vals = _finite_losses(run)
            stalled = _no_progress(vals) and (_never_improved(vals) or _flat_from_start(vals))
            return self.hard("start" if stalled else "none")
        step = trouble[0].step
        first = run.series.steps[0] if run.series.steps else 0
        rel = step - first
        if rel <= 2 or _never_improved(_finite_losses(run, step)):
            return self.hard("start")
        n = max(run_length(run) - first, 1)
        if rel < max(10, 0.15 * n):
            return self.hard("early")
        return self.hard("late")


class LossPattern(Symptom):
    """The loss curve before the failure: steady, a spike that recovers, oscillating,
    diverging, or a plateau (no progress). A plateau reached after the first updates threw the
    loss well above the untrained model's (`overshoot_plateau`) is what far too large steps do
    before the model settles at chance (an adaptive optimizer's first steps, most often); a
    plateau from dead or saturated units, or a bad init, mostly starts without that rise."""

    name = "loss_pattern"
    states = ("steady", "spike_recover", "oscillating", "diverging", "plateau",
              "overshoot_plateau")
    description = "shape of the loss before the failure"
    leak = MappingProxyType({"steady": 0.8, "spike_recover": 0.07, "oscillating": 0.05,
                             "diverging": 0.03, "plateau": 0.04, "overshoot_plateau": 0.01})

    def observe(self, run: Run) -> Mapping[str, float]:
        if loss_level_unreadable(run):
            return self.unobserved()
        stop = nonfinite_step(run)  # a plateau or divergence is the failure: keep it
        kinds = [e.to_state for e in run.events if e.kind == EventKind.LOSS
                 and (stop is None or e.step <= stop)]
        pts = [(s, v) for s, v in losses(run) if math.isfinite(v) and (stop is None or s <= stop)]
        vals = [v for _, v in pts]
        rise = _divergence_began(run)
        if rise is not None and (stop is not None or not _came_back(pts, rise)):
            return self.hard("diverging")
        if len(vals) >= 8:
            first, last = statistics.fmean(vals[:4]), statistics.fmean(vals[-4:])
            if first > 0 and last > 10 * first:
                return self.hard("diverging")
        if len(vals) >= 20 and _ended_far_above(vals):
            return self.hard("diverging")
        if State.LOSS_SPIKE in kinds:
            return self.hard("spike_recover")
        overshot = _overshot(vals)
        plateau = "overshoot_plateau" if overshot else "plateau"
        if State.LOSS_PLATEAU in kinds:
            return {plateau: 0.8, "steady": 0.2}
        if len(vals) >= 20:
            diffs = [b - a for a, b in itertools.pairwise(vals)]
            flips = sum(1 for a, b in itertools.pairwise(diffs) if a * b < 0)
            spread = statistics.pstdev(vals) / (abs(statistics.fmean(vals)) + 1e-12)
            if flips > 0.8 * len(diffs) and spread > 0.5:
                return {"oscillating": 0.7, "steady": 0.3}
            if _no_progress(vals) or _lost_early_best(vals):  # an overshoot first makes the
                # stall the more certain
                return {plateau: 0.8 if overshot else 0.6, "steady": 0.2 if overshot else 0.4}
        return self.hard("steady")


#: How far above the losses just before a rise the last fifth of them may sit for the rise to
#: be one they came back from, and how many losses before it say where they were.
CAME_BACK_MARGIN, CAME_BACK_BEFORE = 1.5, 5


#: How many times where the losses began (`_head`) the mean of their last fifth must be for
#: a run that never came down to have diverged.
ENDED_ABOVE = 3.0


def _ended_far_above(vals: list[float]) -> bool:
    """The (positive) losses ended, over their last fifth, ENDED_ABOVE times or more above
    where they began: far too large steps keep throwing the model around (a dead network's
    output bias swinging), no plateau."""
    head = _head(vals)
    return head > 0 and _last_fifth(vals) >= ENDED_ABOVE * head


def _divergence_began(run: Run) -> int | None:
    """The step the loss left its steady regime on the way to its first divergence (a spike
    that turned into one began at the spike), or None when it never diverged."""
    began = None
    for e in sorted((e for e in run.events if e.kind == EventKind.LOSS), key=lambda e: e.step):
        if e.from_state == State.LOSS_STEADY or began is None:
            began = e.step
        if e.to_state == State.LOSS_DIVERGING:
            return began
    return None


def _came_back(pts: list[tuple[int, float]], rise: int) -> bool:
    """The (positive, finite) losses `pts` (step, loss) came back from the rise that began at
    step `rise` (`_divergence_began`): the mean of their last fifth is within CAME_BACK_MARGIN
    of where they were just before it (the median of the last CAME_BACK_BEFORE losses before
    it; the untrained model's loss for a rise on the first steps). Far too large first steps
    throw the loss up once, then the model settles at chance (dead or saturated units, a
    constant output): the run's failure is the plateau it ended on, not a divergence. A run
    that had learned, then blew up and settled at chance, did not come back. A loss that sat
    at exactly 0 before the rise (a margin loss meeting a hard batch) came back when it ended
    below where it began (`_head`)."""
    vals = [v for _, v in pts]
    if len(vals) < 20:
        return False
    before = [v for s, v in pts if s < rise][-CAME_BACK_BEFORE:]
    level = statistics.median(before) if before else vals[0]
    if level == 0.0:  # a margin loss at exactly 0: back when it ended below where it began
        return _last_fifth(vals) < _head(vals)
    return level > 0 and _last_fifth(vals) <= CAME_BACK_MARGIN * level


#: `_lost_early_best`: the least number of losses, and how far above the early best (as a
#: factor) every later loss must stay.
REGRESS_MIN_STEPS, REGRESS_MARGIN = 50, 1.02


def _lost_early_best(vals: list[float]) -> bool:
    """After its first tenth, the (positive) loss never came back within REGRESS_MARGIN of
    the best it reached in that tenth: quick early progress, then stuck above it (units that
    saturated or died after the first updates and left the model at a constant output). A
    run that keeps learning, even slowly, beats its early best later; one at its noise floor
    comes back to it."""
    if len(vals) < REGRESS_MIN_STEPS:
        return False
    k = len(vals) // 10
    early = min(vals[:k])
    return early > 0 and min(vals[k:]) >= REGRESS_MARGIN * early


#: How far above the untrained model's loss the first updates must throw it to count as an
#: overshoot, and within how many steps.
OVERSHOOT_RISE, OVERSHOOT_STEPS = 1.25, 10


def _overshot(vals: list[float]) -> bool:
    """The first updates threw the (positive) loss at least OVERSHOOT_RISE times above the
    untrained model's, within OVERSHOOT_STEPS steps."""
    return (len(vals) > 1 and vals[0] > 0
            and max(vals[1:OVERSHOOT_STEPS]) >= OVERSHOOT_RISE * vals[0])


#: `loss_jump`: how many earlier losses a jump is judged against (at least JUMP_HISTORY of the
#: last JUMP_WINDOW), how many robust standard deviations above their median it must land, and
#: how far past their own largest excursion.
JUMP_WINDOW, JUMP_HISTORY, JUMP_Z, JUMP_EXCESS = 10, 6, 10.0, 2.0
#: Regimes that, entered before a jump, mean the weights were already in trouble.
_BEFORE_JUMP = frozenset({State.GRAD_EXPLODING, State.ACTIVATION_EXPLODING, State.LOSS_SPIKE,
                          State.LOSS_DIVERGING})


class LossJump(Symptom):
    """Whether the loss jumped on a step whose weights had just given ordinary losses: the
    first step (after a few) whose loss is non-finite or lands far above the losses of the
    steps just before it, while those were steady (no upward trend) and no gradient or
    activation had blown up yet. The weights that gave ordinary losses one step earlier met
    something new: the batch (a corrupt row, its targets included, seen or not), an op that
    hit its singular point, a half-precision limit. A jump that comes after a blow-up or on a
    rising loss is what far too large steps do (`after_trouble`)."""

    name = "loss_jump"
    states = ("none", "on_calm_weights", "after_trouble")
    description = "a loss far above the steps just before it, and whether they were calm"
    leak = MappingProxyType({"none": 0.9, "on_calm_weights": 0.07, "after_trouble": 0.03})

    def observe(self, run: Run) -> Mapping[str, float]:
        if loss_level_unreadable(run):
            return self.unobserved()
        jump = loss_jump_step(run)
        if jump is None:
            return self.hard("none")
        return self.hard("on_calm_weights" if jump[1] else "after_trouble")


def loss_jump_step(run: Run) -> tuple[int, bool] | None:
    """(step, calm before it) of the run's first loss jump (`LossJump`), or None. From a
    window of losses at exactly 0 (a margin loss whose pairs all met it) only a loss above the
    lowest of the first HEAD_STEPS is a jump: any hard batch is far above 0."""
    pts = losses(run)
    for i in range(JUMP_HISTORY, len(pts)):
        step, v = pts[i]
        prev = [x for _, x in pts[max(0, i - JUMP_WINDOW):i] if math.isfinite(x)]
        if len(prev) < JUMP_HISTORY:
            continue
        med = statistics.median(prev)
        mad = statistics.median(abs(x - med) for x in prev) * 1.4826
        spread = max(mad, 1e-3 * abs(med), 1e-12)
        if math.isfinite(v) and not (v - med >= JUMP_Z * spread
                                     and v - med >= JUMP_EXCESS * (max(prev) - med)):
            continue
        began = min((x for _, x in pts[:HEAD_STEPS] if math.isfinite(x)), default=-math.inf)
        if med == 0.0 and math.isfinite(v) and v < began:
            continue  # a margin loss at exactly 0 meeting a hard batch, below where it began
        return step, _calm_before(run, pts[:i], step)
    return None


def _calm_before(run: Run, before: list[tuple[int, float]], step: int) -> bool:
    """No gradient, activation or loss had blown up before `step`, the gradient was not
    already growing into it (`gradient_growing`), the last update measured before it was of
    ordinary size (the median update-to-weight ratio over layers below HIGH_UPDATE_RATIO),
    and the losses before it were not rising (the last window's median more than RISING above
    the one before it, and by more than twice that window's spread: a noisy loss is not a
    rising one)."""
    if any(e.to_state in _BEFORE_JUMP and e.step < step for e in run.events):
        return False
    if gradient_growing(run, step):
        return False
    medians = update_ratio_medians(run, until=step - 1)
    if medians and medians[max(medians)] >= HIGH_UPDATE_RATIO:
        return False
    vals = [v for _, v in before if math.isfinite(v)]
    if len(vals) >= 2 * JUMP_WINDOW:
        last = statistics.median(vals[-JUMP_WINDOW:])
        window = vals[-2 * JUMP_WINDOW:-JUMP_WINDOW]
        earlier = statistics.median(window)
        spread = statistics.median(abs(v - earlier) for v in window) * 1.4826
        if last - earlier > max(RISING * abs(earlier), 2.0 * spread):
            return False
    return True


#: How much the loss may rise from one window to the next before the jump and still be calm.
RISING = 0.1

#: A gradient norm this many times its level a few steps earlier, just before a loss jump,
#: means the weights were already on their way out (the fitted runs: ten of twelve far too
#: large steps read at least this before the jump, six of sixty-eight corrupt batches).
GRAD_GROWTH = 2.0
#: The steps just before a jump (`GRAD_RECENT`) compared with the ones before them
#: (`GRAD_EARLIER`, at least three of them measured).
GRAD_RECENT, GRAD_EARLIER = 2, 6


def gradient_growing(run: Run, step: int) -> bool:
    """Whether the whole model's gradient norm on the GRAD_RECENT steps before `step` reached
    GRAD_GROWTH x its median over the GRAD_EARLIER steps before them. Steps too large for the
    curvature grow the gradient geometrically for a few steps before the loss leaves (the
    weights were no longer calm); a corrupt batch or an op's singular point meets a gradient
    at its usual size."""
    norms = {s: v for s, v in run.series.get("grad_norm") if math.isfinite(v) and v > 0}
    recent = [norms[s] for s in range(step - GRAD_RECENT, step) if s in norms]
    earlier = [norms[s] for s in range(step - GRAD_RECENT - GRAD_EARLIER, step - GRAD_RECENT)
               if s in norms]
    if not recent or len(earlier) < 3:
        return False
    return max(recent) >= GRAD_GROWTH * statistics.median(earlier)


#: `outcome`: a run learned when the median of its last tenth of losses (at least HEAD_STEPS) is
#: at most LEARNED_AT x the lowest of its first HEAD_STEPS, stalled from STALLED_AT up (shared
#: in between). The lowest start, as the scenario contract's stall test takes it: a loss that
#: fell in its first few steps and then sat there made no progress after them. The median of
#: the tail, not the contract's mean: one unlucky minibatch at the end of a noisy loss does
#: not make a stall.
LEARNED_AT, STALLED_AT = 0.8, 0.9
#: The steps whose median loss says where the loss stood after its first few updates.
EARLY_STEPS = (3, 8)
#: A loss that starts negative learned when its last tenth fell by this share of its start's
#: magnitude or more, and stalled when it did not fall at all.
NEGATIVE_LEARNED_FALL = 0.02


class Outcome(Symptom):
    """How the run ended: a non-finite loss, a loss that did not learn, or one that learned
    (`LEARNED_AT`, `STALLED_AT`: the median of the last tenth against the lowest of the first
    steps, and against where the loss stood after its first few updates, `EARLY_STEPS`);
    unobserved when the loss cannot say (fewer than STALL_MIN_STEPS steps, a loss that keeps
    changing sign and so has no level). A loss that goes negative (a likelihood, a summed
    objective to maximise) is read from its medians alone: from a positive start, tail / head
    as usual; from a negative one, which has no scale, any fall of NEGATIVE_LEARNED_FALL of its
    magnitude or more is learning and no fall at all a stall. A run that learned with every
    value finite is what a healthy run looks like to the person who trained it."""

    name = "outcome"
    states = ("learned", "stalled", "nonfinite")
    description = "how the loss ended"
    leak = MappingProxyType({"learned": 0.9, "stalled": 0.08, "nonfinite": 0.02})
    #: The scenario contract admits no healthy run that stalls, so the fitted healthy runs
    #: read `stalled` 0.9% of the time; healthy programs outside the suite do stall: 9 of the
    #: 40 healthy runs of benchmarks/hf_zoo.py and real_programs.py (language models on random
    #: tokens for 40 steps, a GAN's generator, whose loss rises as its discriminator learns).
    #: A stall is then evidence that something is wrong, not proof of it.
    fitted_leak_floor = MappingProxyType({"stalled": 0.05})

    def observe(self, run: Run) -> Mapping[str, float]:
        vals = [v for _, v in losses(run)]
        if any(not math.isfinite(v) for v in vals):
            return self.hard("nonfinite")
        if len(vals) < STALL_MIN_STEPS or loss_level_unreadable(run):
            return self.unobserved()
        tail = statistics.median(loss_tail(vals))
        if min(vals) < 0:
            head = statistics.median(vals[:HEAD_STEPS])
            if head == 0.0:
                return self.unobserved()
            if head > 0.0:  # it went negative on the way, or one batch's loss did
                return self._judged(tail / head)
            # a negative start has no scale: its magnitude is an offset (a likelihood's
            # constants), so any fall beyond NEGATIVE_LEARNED_FALL of it is learning, as the
            # scenario contract's stall test counts any fall below a start at or under zero
            fall = (head - tail) / abs(head)
            return self._judged(1.0 - fall, learned_at=1.0 - NEGATIVE_LEARNED_FALL,
                                stalled_at=1.0)
        # the lowest of the first steps: the untrained model's loss when the first updates
        # threw it up, where the first few updates left it when it fell only while an output
        # bias found the targets' mean and then sat there
        head = min(vals[:HEAD_STEPS])
        if not head > 0:
            return self.unobserved()
        # or where the loss stood a few steps later, when it went on falling a little longer
        early = statistics.median(vals[EARLY_STEPS[0]:EARLY_STEPS[1]])
        return self._judged(max(tail / head, tail / early if early > 0 else 0.0))

    @staticmethod
    def _judged(ratio: float, learned_at: float = LEARNED_AT,
                stalled_at: float = STALLED_AT) -> Mapping[str, float]:
        """Learned at a last tenth of at most `learned_at` x the first steps' loss, stalled
        from `stalled_at` up, shared in between."""
        stalled = min(1.0, max(0.0, (ratio - learned_at) / (stalled_at - learned_at)))
        return {"learned": 1.0 - stalled, "stalled": stalled, "nonfinite": 0.0}
