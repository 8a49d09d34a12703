"""Read-only views of a Run that symptoms and localizers share (pure functions, no torch)."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Sequence

from causal.schema.run import LOSS, Direction, Event, EventKind, LayerStat, Run, State

#: Regimes that mean trouble (a plateau is judged by the loss-pattern symptom instead).
TROUBLE = frozenset({
    State.GRAD_EXPLODING, State.GRAD_VANISHING, State.ACTIVATION_SATURATED,
    State.ACTIVATION_DEAD, State.ACTIVATION_EXPLODING, State.LOSS_SPIKE, State.LOSS_DIVERGING,
    State.GRAD_INF, State.GRAD_NAN, State.ACTIVATION_INF, State.ACTIVATION_NAN, State.LOSS_INF,
    State.LOSS_NAN, State.INPUT_INF, State.INPUT_NAN,
})


def layer_series(run: Run, stat: str,
                 until: int | None = None) -> dict[str, list[tuple[int, float]]]:
    """Per layer, the (step, value) pairs of one recorder statistic over every stored window
    (each step once), up to step `until` included."""
    seen: dict[str, dict[int, float]] = {}
    for w in run.windows:
        if stat not in w.stats:
            continue
        for layer in w.layers:
            for step, value in w.series(layer, stat):
                if until is None or step <= until:
                    seen.setdefault(layer, {})[step] = value
    return {layer: sorted(v.items()) for layer, v in seen.items() if v}


#: Below this weight gain (rms x sqrt(fan_in); PyTorch's default init gives about 0.58) a
#: layer's weights start near zero (zero-initialised gates and output heads, LoRA's B, tiny
#: embeddings).
NEAR_ZERO_GAIN = 0.05


def starts_near_zero(run: Run, layer: str) -> bool:
    """Whether `layer`'s weights were near zero when the run began: then its first update is
    most of its weight, and its first update ratio says how small they were, not how far the
    optimizer overshot (Adam's first step is about lr per weight, whatever their scale)."""
    node = run.dag.node(layer)
    return node is not None and node.weight_gain is not None \
        and node.weight_gain < NEAR_ZERO_GAIN


#: An update-to-weight ratio from here up is high (about 1e-3 is healthy).
HIGH_UPDATE_RATIO = 1e-2


def update_ratios(run: Run, until: int | None = None) -> dict[str, list[tuple[int, float]]]:
    """Per layer, the (step, |dw|/|w|) pairs measured up to step `until`, without a high first
    update of a layer whose weights started near zero (`starts_near_zero`): small weights
    inflate the ratio, so a high one says nothing, while a low one still says no overshoot."""
    series = layer_series(run, LayerStat.UPDATE_RATIO, until=until)
    first = run.series.steps[0] if run.series.steps else None
    out = {}
    for layer, pts in series.items():
        # a NaN first ratio says nothing either: only a ratio known to be low is kept
        low = bool(pts) and pts[0][1] < HIGH_UPDATE_RATIO
        if pts and pts[0][0] == first and not low and starts_near_zero(run, layer):
            pts = pts[1:]
        if pts:
            out[layer] = pts
    return out


def update_ratio_medians(run: Run, until: int | None = None) -> dict[int, float]:
    """Per step measured (up to `until`), the median over layers of the finite update ratios
    (`update_ratios`)."""
    by_step: dict[int, list[float]] = {}
    for pts in update_ratios(run, until=until).values():
        for step, v in pts:
            if math.isfinite(v):
                by_step.setdefault(step, []).append(v)
    return {step: statistics.median(v) for step, v in sorted(by_step.items())}


def lr_settings(run: Run, until: int | None = None) -> list[tuple[int, float]]:
    """(param group, lr) of every learning rate the run set at or before step `until`, in the
    order it set them (a schedule's every change)."""
    out = []
    for ch in run.settings:
        if ch.key.startswith("lr/") and (until is None or ch.step <= until):
            try:
                out.append((int(ch.key[3:]), float(ch.value)))
            except ValueError:
                continue
    return out


def half_dtypes(run: Run) -> set[str]:
    """The half-precision dtypes the run computed in ("float16", "bfloat16"): its autocast
    dtypes and its parameters' dtype. Empty for a float32 run."""
    used = {str(c.value) for c in run.settings if c.key == "amp_dtype"}
    used.add(str(run.meta.get("param_dtype") or ""))
    return used & {"float16", "bfloat16"}


def skipped_steps(run: Run) -> set[int]:
    """Steps whose non-finite gradients a GradScaler skipped, with a finite loss at that step or
    after it: the scaler doing its job, not a failure. An overflow of the scaled gradients
    leaves the step's own loss finite, so a skip on the run's last recorded step (a run read
    while it trains, or one that ended there) is one too."""
    finite = [s for s, v in run.series.get("loss") if math.isfinite(v)]
    last_finite = max(finite) if finite else -1
    return {e.step for e in run.events if e.kind == EventKind.NONFINITE_ORIGIN
            and e.birth.scaler_skipped and e.step <= last_finite}


def first_origin(run: Run) -> Event | None:
    """Where the first non-finite value that mattered was born (scaler skips excluded, and
    values that came in with the data when the loss never saw one: `data_nonfinite_contained`)."""
    skipped = skipped_steps(run)
    contained = data_nonfinite_contained(run)
    origins = [e for e in run.events
               if e.kind == EventKind.NONFINITE_ORIGIN and e.step not in skipped
               and not (contained and e.birth.direction == Direction.INPUT)]
    return min(origins, key=lambda e: e.step) if origins else None


def data_nonfinite_contained(run: Run) -> bool:
    """Every loss the run recorded is finite, over at least STALL_MIN_STEPS steps: a NaN or
    inf that came in with the data (padding, a missing reading) never reached the loss, so
    the pipeline masked or filled it, as GRU-D-style models do by design. Such a value is no
    failure's origin and no corrupt batch."""
    vals = [v for _, v in losses(run)]
    return len(vals) >= STALL_MIN_STEPS and all(math.isfinite(v) for v in vals)


def input_born(run: Run, until: int | None = None) -> Event | None:
    """The first non-finite value's origin when it came in with the model's arguments (up to
    step `until`)."""
    origin = first_origin(run)
    if origin is None or origin.birth.direction != Direction.INPUT:
        return None
    return origin if until is None or origin.step <= until else None


def born_in_found_targets(run: Run, origin: Event | None) -> bool:
    """The first non-finite value `origin` came in with targets the monitor found in the
    loss's graph, not ones the loop gave: the labels, or a value the loss computed from them."""
    return (origin is not None and origin.birth.direction == Direction.INPUT
            and origin.birth.tensor == "target" and not run.targets_given)


def loss_output_at_bound(origin: Event) -> str | None:
    """For a value born in the loss: the layer that produced the model's output, when some of
    its values were exactly 0 or 1 (the singular points of log, log(1 - p) and division)."""
    birth = origin.birth
    if birth.direction != Direction.LOSS or not birth.output_layer:
        return None
    if (birth.output_zeros or 0) + (birth.output_ones or 0) <= 0:
        return None
    return birth.output_layer


def trouble_events(run: Run, until: int | None = None) -> list[Event]:
    """Events that entered a bad regime (and non-finite origins), by step; gradients that a
    GradScaler skipped in a run that recovered are not trouble, nor a gate closing and opening
    again (`passing_vanish`), nor anything in a run that learned through it
    (`learned_through`), nor the loss's regimes when its level cannot be read
    (`loss_level_unreadable`), nor a gradient "vanishing" on a step whose loss was exactly 0
    (`zero_loss_steps`)."""
    skipped = skipped_steps(run)
    passing = passing_vanish(run)
    unreadable = loss_level_unreadable(run)
    at_zero = zero_loss_steps(run)
    events = sorted((e for e in run.events
                     if (str(e.to_state) in TROUBLE or e.kind == EventKind.NONFINITE_ORIGIN)
                     and not (e.step in skipped
                              and (e.kind in (EventKind.GRAD_FINITE, EventKind.NONFINITE_ORIGIN)
                                   or e.layer_name == LOSS))
                     and not (unreadable and e.kind == EventKind.LOSS)
                     and not (e.step in at_zero and e.to_state == State.GRAD_VANISHING)
                     and id(e) not in passing), key=lambda e: e.step)
    if events and learned_through(run, events[0].step):
        return []
    return [e for e in events if until is None or e.step <= until]


#: `learned_through`: how far below where it began, and below its best before the trouble,
#: the loss must end (as a fraction), over at least LEARNED_MIN_STEPS steps.
LEARNED_FRACTION, LEARNED_MIN_STEPS = 0.5, 30


def learned_through(run: Run, step: int) -> bool:
    """The run never turned non-finite and its (positive) loss ended, over its last tenth,
    below LEARNED_FRACTION of both its first tenth and its best before `step`: whatever
    happened at `step` (gradients of a stiff loss growing as it starts to fall, a plateau
    it left), training went on to learn, so it was no failure."""
    if nonfinite_step(run) is not None:
        return False
    vals = [(s, v) for s, v in losses(run) if math.isfinite(v)]
    if len(vals) < LEARNED_MIN_STEPS:
        return False
    k = max(len(vals) // 10, 3)
    head = statistics.fmean(v for _, v in vals[:k])
    tail = statistics.fmean(v for _, v in vals[-k:])
    before = [v for s, v in vals if s <= step]
    return (head > 0 and bool(before) and min(before) > 0
            and tail < LEARNED_FRACTION * min(head, min(before)))


#: Steps from the run's first within which gradients that vanish may be a zero-initialised
#: gate's, and how far above the vanishing threshold they must come back to count as learning.
OPENING_STEPS = 3
OPENED_FACTOR = 100.0
#: How many times a layer's gradient must fall to exactly zero and come back to be a gate's.
GATE_CLOSINGS = 2


def passing_vanish(run: Run) -> set[int]:
    """The `grad_vanishing` events (by id) of a gate, which closes a gradient path by design:
    gradients that came back to ordinary magnitudes (100x the vanishing threshold) before the
    run's first non-finite value, after they either

    - vanished on the run's first steps: a gate or residual branch initialised at zero
      (adaLN-Zero, LoRA's B, zero-init residual scales) has no gradient until its first
      update; or
    - fell to exactly zero, GATE_CLOSINGS times or more, in a run where no layer had died: a
      clamp, hinge or threshold in the loss (free bits, a margin met, a masked term) that
      passes no gradient on some steps and some again on others.

    Gradients that vanish later and stay small, or only crawl back over the threshold, still
    count, as do exact zeros that a layer of dead ReLUs downstream explains."""
    if not run.series.steps:
        return set()
    start, stop = run.series.steps[0], nonfinite_step(run)
    floor = float((run.meta.get("thresholds") or {}).get("vanishing", 1e-6)) * OPENED_FACTOR
    back: dict[str, list[int]] = {}
    for e in run.events:
        if (e.kind == EventKind.GRAD and e.to_state == State.GRAD_HEALTHY and e.value >= floor
                and (stop is None or e.step < stop)):
            back.setdefault(e.layer_name, []).append(e.step)
    came_back = [e for e in run.events
                 if e.kind == EventKind.GRAD and e.to_state == State.GRAD_VANISHING
                 and any(s > e.step for s in back.get(e.layer_name, ()))]
    passing = {id(e) for e in came_back if e.step - start < OPENING_STEPS}
    died = min((e.step for e in run.events if e.to_state == State.ACTIVATION_DEAD), default=None)
    closings: dict[str, list[Event]] = {}
    for e in came_back:
        if e.value == 0.0:
            closings.setdefault(e.layer_name, []).append(e)
    for closed in closings.values():
        if len(closed) >= GATE_CLOSINGS and (died is None or died > closed[0].step):
            passing.update(id(e) for e in closed)
    return passing


def nonfinite_step(run: Run) -> int | None:
    """The step of the first non-finite value that mattered, or None."""
    origin = first_origin(run)
    return origin.step if origin is not None else None


#: Batches before a sign break that say which sign the data always had.
SIGN_HISTORY = 8
#: A negative value counts as a sign break from this share of the data's usual max|x| up
#: (data rescaled into [0, 1] dipping to -1e-7 by rounding is no corrupt record).
SIGN_BREAK_SHARE = 0.01


def sign_break(run: Run) -> tuple[int, str, float] | None:
    """The batch that broke the run by leaving the sign its data always had: at the step of
    the first non-finite value, the inputs' (or targets') smallest value is negative where the
    batches of every earlier step (at least SIGN_HISTORY) had none, by at least SIGN_BREAK_SHARE
    of their usual max|x|. A sentinel (-1, -999) or a sign-flipped reading among positive
    data, taken by an op whose domain the data kept to (log, sqrt, a power): (step, "input" or
    "target", the value). A zero is no break: log(0) of a legitimate zero is the op's fault."""
    step = nonfinite_step(run)
    if step is None:
        return None
    for kind in ("input", "target"):
        mins = [(s, v) for s, v in run.series.get(f"{kind}_min") if s <= step and math.isfinite(v)]
        if not mins or mins[-1][0] != step or mins[-1][1] >= 0:
            continue
        before = [v for _, v in mins[:-1]]
        if len(before) < SIGN_HISTORY or min(before) < 0:
            continue
        peaks = [v for s, v in run.series.get(f"{kind}_max_abs") if s < step and math.isfinite(v)]
        if peaks and -mins[-1][1] >= SIGN_BREAK_SHARE * statistics.median(peaks):
            return step, kind, mins[-1][1]
    return None


#: Batches the outlier test needs to say what ordinary data looks like.
OUTLIER_MIN_BATCHES = 8
#: A batch is extreme when the robust z-score of its log max|x| passes this...
OUTLIER_Z = 8.0
#: ...and it lies this many decades above every other batch's max|x|.
OUTLIER_GAP_DECADES = 0.7


def extreme_batch(run: Run) -> tuple[int, str] | None:
    """The one batch, at or before the failure, far above all others in max|x| (or max|y|):
    a robust z-score of log max|x| over OUTLIER_Z and a gap of OUTLIER_GAP_DECADES to the next.
    Only a batch up to the failure can be its cause; when the run broke in its first steps,
    the batches after it (the same data) say what ordinary is. (step, "input" or "target")."""
    stop = failure_step(run)
    for kind in ("input", "target"):
        pts = [(s, v) for s, v in run.series.get(f"{kind}_max_abs") if math.isfinite(v) and v > 0]
        candidates = sum(1 for s, _ in pts if stop is None or s <= stop + 1)
        pts = pts[:max(candidates, OUTLIER_MIN_BATCHES)]
        if candidates == 0 or len(pts) < OUTLIER_MIN_BATCHES:
            continue
        logs = [math.log10(v) for _, v in pts]
        z = robust_z(logs)
        top = max(range(candidates), key=z.__getitem__)
        others = logs[:top] + logs[top + 1:]
        if z[top] > OUTLIER_Z and logs[top] - max(others) > OUTLIER_GAP_DECADES:
            return pts[top][0], kind
    return None


def broke_on_extreme_batch(run: Run) -> bool:
    """The first non-finite value was born on the step an extreme batch entered the model
    (`extreme_batch`), or one that left the sign its data always had (`sign_break`): an op
    that kept to ordinary values until then met the batch's."""
    step = nonfinite_step(run)
    if step is None:
        return False
    if sign_break(run) is not None:
        return True
    extreme = extreme_batch(run)
    return extreme is not None and extreme[0] == step


def failure_step(run: Run) -> int | None:
    """The step the run started to fail: its first non-finite value, else the first gradient
    or loss transition into a bad regime (activation regimes explain failures, they are not
    one)."""
    origin = nonfinite_step(run)
    if origin is not None:
        return origin
    trouble = [e for e in trouble_events(run) if not str(e.to_state).startswith("activation")]
    for e in trouble:
        if not _passing_spike(run, e, trouble):
            return e.step
    return None


#: How many steps past the onset of a failure that never turned non-finite (a stall, vanishing
#: gradients) layer states are still read as present at the onset (`state_window_end`).
STALL_LOOKAHEAD = 50


def state_window_end(run: Run) -> int | None:
    """The last step whose layer states (saturated, dead fractions) count as evidence of the
    failure. A non-finite failure: its step (what follows is its consequence). A failure that
    stayed finite: the state that stalled the run persists, and the activation statistics of
    its onset step are seldom recorded (they run on a schedule, and in full only once the
    cheap signals have turned abnormal), so the next STALL_LOOKAHEAD steps count too."""
    stop = failure_step(run)
    if stop is None or nonfinite_step(run) is not None:
        return stop
    return stop + STALL_LOOKAHEAD


def _passing_spike(run: Run, spike: Event, trouble: list[Event]) -> bool:
    """A loss spike alone at its step (no gradient in trouble with it) that the loss came back
    from before anything else went wrong: noise of a low loss, not the start of a failure."""
    if spike.to_state != State.LOSS_SPIKE or any(
            e.step == spike.step and e is not spike for e in trouble):
        return False
    later = [e.step for e in trouble if e.step > spike.step]
    until = later[0] if later else math.inf
    return any(e.layer_name == LOSS and e.to_state == State.LOSS_STEADY
               and spike.step < e.step < until for e in run.events)


def run_length(run: Run) -> int:
    """Steps recorded (the last step label + 1 when labels are plain counters)."""
    steps = run.series.steps
    return (max(steps) + 1) if steps else 0


def forward_order(run: Run) -> dict[str, int]:
    """Layer name -> forward position (unknown layers are absent)."""
    return {name: i for i, name in enumerate(run.dag.forward_order())}


def layer_label(run: Run, layer: str) -> str:
    """How reports name a layer: "'layers.4' (Tanh)"; run-level pseudo layers as they are;
    the root module (name '') as the model's own forward code, outside its submodules."""
    if layer.startswith("<"):
        return layer
    if layer == "":
        root = run.dag.node("")
        kind = f" of {root.module_type}" if root is not None else ""
        return f"the model's own forward code{kind} (outside its submodules)"
    node = run.dag.node(layer)
    return f"{layer!r} ({node.module_type})" if node is not None else repr(layer)


#: Module types whose weights are lookup tables, not projections: their scale is no init gain
#: (an embedding drawn from N(0, 1) has rms 1 whatever its width).
TABLE_TYPES = frozenset({"Embedding", "EmbeddingBag"})


def start_gains(run: Run) -> list[tuple[str, float]]:
    """(layer, gain) in forward order for the layers whose weight's scale at the start was
    recorded (`LayerNode.weight_gain`: rms x sqrt(fan_in), about 0.58 under PyTorch's default
    init, 1-1.4 under Xavier or Kaiming, 0 when zero-initialised), lookup tables left out."""
    return [(n, node.weight_gain) for n in run.dag.forward_order()
            if (node := run.dag.node(n)) is not None and node.weight_gain is not None
            and node.module_type not in TABLE_TYPES]


def median_start_gain(run: Run) -> float | None:
    """The median of `start_gains` over the layers (None when no weight's scale was recorded):
    where most of the network's weights started, a few zeroed heads or gates aside."""
    gains = [gain for _, gain in start_gains(run)]
    return statistics.median(gains) if gains else None


def zero_init_layers(run: Run) -> tuple[list[str], int]:
    """(the layers whose weights started at exactly zero, in forward order; how many layers
    have weights) when those are at least two and at least half of them, or when one of them
    is stuck there (`stuck_at_zero`), else ([], count). A few zero-initialised layers that
    receive a gradient (output heads, residual gates, LoRA's B) are a design."""
    gains = start_gains(run)
    zero = [n for n, gain in gains if gain == 0.0]
    if (len(zero) >= 2 and 2 * len(zero) >= len(gains)) or stuck_at_zero(run):
        return zero, len(gains)
    return [], len(gains)


def stuck_at_zero(run: Run) -> list[str]:
    """The layers whose weights started at exactly zero and whose gradient was exactly zero
    at every step recorded of the first OPENING_STEPS: a zero layer's gradient is what flows
    back into it times what it reads, so with another zero layer after it, or a ReLU that its
    zero output keeps shut, it never moves (a zero head reading features does, and learns)."""
    grads = layer_series(run, LayerStat.GRAD_NORM, until=OPENING_STEPS - 1)
    return [n for n, gain in start_gains(run) if gain == 0.0
            and (pts := [v for _, v in grads.get(n, [])]) and all(v == 0.0 for v in pts)]


def param_layers(run: Run) -> list[str]:
    """Layers with parameters, in forward order."""
    return [n for n in run.dag.forward_order()
            if (node := run.dag.node(n)) is not None and node.param_count > 0 and node.ran]


def main_path_layers(run: Run) -> list[str]:
    """The layers with parameters along the layer DAG's path through the most of them (the
    network's depth, leaving out side branches such as a time-step or conditioning embedding's
    projection into each block), in forward order. All of `param_layers` when the graph has no
    edges."""
    layers = param_layers(run)
    if not run.dag.edges:
        return layers
    import networkx as nx  # here: its import takes longer than a whole diagnosis

    has_params = set(layers)
    g = nx.DiGraph()
    g.add_edges_from((a, b, {"w": int(b in has_params)}) for a, b in run.dag.edges)
    try:
        path = nx.dag_longest_path(g, weight="w", default_weight=0)
    except nx.NetworkXException:  # not a DAG after all
        return layers
    return [n for n in path if n in has_params]


def start_stds(run: Run) -> tuple[int, dict[str, float]]:
    """The first step with recorded activation statistics, and each layer's output std there
    when finite and positive (what scale-against-depth readings start from)."""
    series = layer_series(run, LayerStat.ACT_STD)
    first = min((pts[0][0] for pts in series.values()), default=0)
    return first, {layer: v for layer, pts in series.items()
                   if (v := dict(pts).get(first)) is not None and math.isfinite(v) and v > 0}


def finite(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def robust_z(values: list[float]) -> list[float]:
    """|x - median| / (1.4826 MAD) for each value (0 when the spread is 0)."""
    if len(values) < 3:
        return [0.0] * len(values)
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values) * 1.4826
    if mad <= 0:
        spread = max(abs(v - med) for v in values)
        return [0.0 if spread == 0 else (math.inf if abs(v - med) > 0 else 0.0)
                for v in values]
    return [abs(v - med) / mad for v in values]


def losses(run: Run) -> list[tuple[int, float]]:
    return run.series.get("loss")


def zero_loss_steps(run: Run) -> frozenset[int]:
    """The steps whose loss was exactly 0: a hinge, margin or triplet loss whose every pair
    already met its margin. Their gradients are exactly 0 because the loss is, not because they
    vanished through the layers, and a loss that leaves 0 for a hard batch neither jumped nor
    diverged unless it climbed above where the run began (`causal.symptoms.failure`)."""
    return frozenset(s for s, v in losses(run) if v == 0.0)


#: `loss_level_unreadable`: the share of consecutive finite losses that must change sign, and
#: the least number of changes.
SIGN_CHANGE_SHARE, SIGN_CHANGE_MIN = 0.1, 3


def loss_level_unreadable(run: Run) -> bool:
    """The loss keeps changing sign (on at least SIGN_CHANGE_SHARE of consecutive finite steps,
    SIGN_CHANGE_MIN times or more): a policy-gradient or actor-critic objective, an advantage-
    weighted or adversarial term, whose level is no error that training drives down. Its rises
    are then no divergence, its flat stretches no stall, its jumps no broken batch: the readings
    of the loss's level are left unobserved. A likelihood that goes negative as it learns (a
    Gaussian NLL, a flow) crosses zero once or twice and stays readable."""
    vals = [v for _, v in losses(run) if math.isfinite(v) and v != 0.0]
    changes = sum(1 for a, b in itertools.pairwise(vals) if (a < 0.0) != (b < 0.0))
    return changes >= SIGN_CHANGE_MIN and changes >= SIGN_CHANGE_SHARE * (len(vals) - 1)


#: The stall criterion of the scenario contract (`neuraldbg suite verify` applies it too): head =
#: the lowest of the first HEAD_STEPS losses, tail = the mean of the last TAIL_FRACTION of them
#: (at least HEAD_STEPS); a run stalls when tail >= STALL_RATIO x head.
HEAD_STEPS, TAIL_FRACTION, STALL_RATIO = 5, 0.1, 0.9
#: `loss_stall` judges only runs with at least this many finite losses.
STALL_MIN_STEPS = 20


def loss_tail(vals: Sequence[float]) -> Sequence[float]:
    """The last TAIL_FRACTION of `vals`, at least HEAD_STEPS of them."""
    return vals[-max(HEAD_STEPS, math.ceil(TAIL_FRACTION * len(vals))):]


def stall_ratio(vals: Sequence[float]) -> float:
    """Mean loss of the last 10% of steps (at least 5) over the lowest of the first 5 steps
    (for a head at or below 0: 0 when the tail is no higher, else inf)."""
    if not vals:
        return math.inf
    head = min(vals[:HEAD_STEPS])
    tail = statistics.fmean(loss_tail(vals))
    if head <= 0.0:
        return 0.0 if tail <= head else math.inf
    return tail / head


def loss_stall(run: Run) -> tuple[float, float] | None:
    """(head, tail) when the run's loss stalled by `stall_ratio`, else None. Only judged on a
    positive loss that stayed finite over at least STALL_MIN_STEPS steps (a NaN run failed
    otherwise; a loss that can go negative, such as a likelihood's, has no such scale)."""
    vals = [v for _, v in losses(run)]
    if len(vals) < STALL_MIN_STEPS or not all(math.isfinite(v) for v in vals) or min(vals) < 0:
        return None
    ratio = stall_ratio(vals)
    if ratio < STALL_RATIO:
        return None
    head = min(vals[:HEAD_STEPS])
    return head, ratio * head


#: `trivial_losses` needs the targets on at least this many steps.
TRIVIAL_MIN_STEPS = 3


def trivial_losses(run: Run) -> dict[str, float]:
    """What a model that ignores its inputs scores, by the targets the run recorded, one level
    per loss it may be (by name): with class labels, the cross-entropy of predicting their
    frequencies (`labels`: the entropy of all the labels seen, the last step's pooled value);
    with numeric targets, the mean squared error of predicting their mean (`mean`: their
    pooled variance) and, for targets within [0, 1], the binary cross-entropy of predicting it
    (`binary`). Empty when the run recorded neither on TRIVIAL_MIN_STEPS steps."""
    out: dict[str, float] = {}
    ent = [v for _, v in run.series.get("target_entropy") if math.isfinite(v)]
    if len(ent) >= TRIVIAL_MIN_STEPS:
        out["labels"] = ent[-1]
    means = dict(run.series.get("target_mean"))
    stds = dict(run.series.get("target_std"))
    peaks = dict(run.series.get("target_max_abs"))
    steps = [s for s in means if s in stds and math.isfinite(means[s]) and math.isfinite(stds[s])]
    if len(steps) >= TRIVIAL_MIN_STEPS:
        mean = statistics.fmean(means[s] for s in steps)
        out["mean"] = statistics.fmean(stds[s] ** 2 for s in steps) + statistics.pvariance(
            [means[s] for s in steps])
        if 0.0 < mean < 1.0 and all(peaks.get(s, math.inf) <= 1.0 for s in steps):
            out["binary"] = -(mean * math.log(mean) + (1.0 - mean) * math.log1p(-mean))
    return {k: v for k, v in out.items() if v > 0.0}
