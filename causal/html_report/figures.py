"""The report's figures, drawn with matplotlib into SVG text (no pyplot, no global state): the loss
curve with the events and the failing step, the per-layer timeline of regimes, the layer graph
with the failure's origin and spread, and the flight recorder's heatmap around the first event.

Each function takes what it draws from the run and returns an `<svg>` element as a string, or
None when the run holds nothing to draw. Long runs are thinned (a min/max envelope per pixel
column), so a 20,000-step run's report stays small.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from causal.diagnose import learned_nothing_end
from causal.schema.run import Event, EventKind, Run, State, Window

#: At most this many points of the loss curve (a min/max pair per column past it).
MAX_POINTS = 1200
#: At most this many layers in the timeline and the graph (those with events first).
MAX_LAYERS = 60

#: Regimes drawn as bands in the timeline: state -> (label, colour).
REGIMES: dict[str, tuple[str, str]] = {
    State.GRAD_EXPLODING: ("exploding", "#d62728"),
    State.ACTIVATION_EXPLODING: ("exploding", "#d62728"),
    State.GRAD_VANISHING: ("vanishing", "#1f77b4"),
    State.ACTIVATION_SATURATED: ("saturated", "#ff7f0e"),
    State.ACTIVATION_DEAD: ("dead", "#7f7f7f"),
    **{s: ("non-finite", "#111111") for s in (
        State.GRAD_INF, State.GRAD_NAN, State.ACTIVATION_INF, State.ACTIVATION_NAN,
        State.LOSS_INF, State.LOSS_NAN, State.INPUT_INF, State.INPUT_NAN, State.INF,
        State.NAN)},
    State.LOSS_DIVERGING: ("exploding", "#d62728"),
    State.LOSS_SPIKE: ("spike", "#e377c2"),
    State.LOSS_PLATEAU: ("plateau", "#bcbd22"),
}


@contextmanager
def _figure(width: float, height: float) -> Iterator[Any]:
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "neuraldbg", "font.size": 9,
                     "axes.spines.top": False, "axes.spines.right": False}):
        yield Figure(figsize=(width, height), layout="constrained")


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def thinned(points: Sequence[tuple[int, float]], limit: int = MAX_POINTS
            ) -> list[tuple[int, float]]:
    """At most about `limit` points that keep every spike: the min and max of each bucket."""
    if len(points) <= limit:
        return list(points)
    size = math.ceil(len(points) / (limit // 2))
    out: list[tuple[int, float]] = []
    for i in range(0, len(points), size):
        bucket = points[i:i + size]
        lo, hi = min(bucket, key=lambda p: p[1]), max(bucket, key=lambda p: p[1])
        out += sorted({lo, hi})
    return out


def loss_curve(run: Run, failing_step: int | None) -> str | None:
    """The loss against the step (log scale when positive over more than two decades), with the
    steps where a non-finite loss appeared, the layers' first events, the failing step, and the
    trivial predictor's loss when the run ended there (`diagnose.learned_nothing_end`)."""
    points = [(s, v) for s, v in run.series.get("loss") if math.isfinite(v)]
    bad = [s for s, v in run.series.get("loss") if not math.isfinite(v)]
    if not points and not bad:
        return None
    with _figure(8.0, 2.8) as fig:
        ax = fig.add_subplot()
        if points:
            xs, ys = zip(*thinned(points), strict=True)
            ax.plot(xs, ys, color="#1f77b4", linewidth=1.0, label="loss")
            if min(ys) > 0 and max(ys) / min(ys) > 100:
                ax.set_yscale("log")
        firsts = first_events(run)[:12]
        for ev in firsts:
            ax.axvline(ev.step, color="#999999", linewidth=0.6, alpha=0.6)
        if firsts:
            ax.plot([], [], color="#999999", linewidth=0.6, label="a layer's first event")
        if bad:
            ax.axvline(bad[0], color="#111111", linewidth=1.2,
                       label=f"loss non-finite (step {bad[0]})")
        if failing_step is not None:
            ax.axvline(failing_step, color="#d62728", linewidth=1.4, linestyle="--",
                       label=f"failing step {failing_step}")
        if (end := learned_nothing_end(run)) is not None:
            ax.axhline(end.level, color="#2ca02c", linewidth=1.0, linestyle=":",
                       label="a model ignoring its inputs")
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.legend(loc="best", fontsize=8, frameon=False)
        return _svg(fig)


def first_events(run: Run) -> list[Event]:
    """Each signal's first event, in step order."""
    seen: set[str] = set()
    out = []
    for ev in sorted(run.events, key=lambda e: e.step):
        if ev.layer_name not in seen and ev.kind != EventKind.NONFINITE_ORIGIN:
            seen.add(ev.layer_name)
            out.append(ev)
    return out


def regime_bands(run: Run) -> dict[str, list[tuple[int, int, str]]]:
    """Per layer, the (start, end, state) intervals its signals spent in a regime of `REGIMES`
    (each signal's state holds from its event to its next one, or to the run's end)."""
    end = max([*run.series.steps, *(e.step for e in run.events), 0]) + 1
    by_signal: dict[tuple[str, str], list[Event]] = {}
    for ev in sorted(run.events, key=lambda e: e.step):
        if ev.kind != EventKind.NONFINITE_ORIGIN:
            by_signal.setdefault((ev.layer_name, str(ev.kind)), []).append(ev)
    bands: dict[str, list[tuple[int, int, str]]] = {}
    for (layer, _), events in by_signal.items():
        for ev, nxt in zip(events, [*events[1:], None], strict=True):
            if str(ev.to_state) in REGIMES:
                stop = nxt.step if nxt is not None else end
                bands.setdefault(layer, []).append((ev.step, max(stop, ev.step + 1),
                                                    str(ev.to_state)))
    return bands


def layer_rows(run: Run, bands: dict[str, list[tuple[int, int, str]]]) -> list[str]:
    """The layers drawn, in forward order: every one with a band, then others up to
    `MAX_LAYERS`; run-level signals (the loss, the inputs) first."""
    order = run.dag.forward_order()
    extra = [name for name in bands if name not in order]
    with_bands = [name for name in order if name in bands]
    rest = [name for name in order if name not in bands]
    chosen = set((with_bands + rest)[:max(MAX_LAYERS, len(with_bands))])
    return extra + [name for name in order if name in chosen]


def timeline(run: Run) -> str | None:
    """Layers down, steps across: each regime a coloured band."""
    bands = regime_bands(run)
    if not bands:
        return None  # no signal left its healthy regime
    rows = layer_rows(run, bands)
    end = max([*run.series.steps, *(e.step for e in run.events), 1])
    with _figure(8.0, 0.8 + 0.22 * len(rows)) as fig:
        ax = fig.add_subplot()
        shown: dict[str, str] = {}
        for y, name in enumerate(rows):
            for start, stop, state in bands.get(name, ()):
                label, colour = REGIMES[state]
                ax.broken_barh([(start, stop - start)], (y - 0.35, 0.7), facecolors=colour)
                shown[label] = colour
        ax.set_yticks(range(len(rows)), [_short(r) for r in rows], fontsize=7)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlim(0, end + 1)
        ax.set_xlabel("step")
        ax.grid(axis="y", color="#eeeeee", linewidth=0.5)
        for label, colour in shown.items():
            ax.plot([], [], color=colour, linewidth=6, label=label)
        if shown:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
        return _svg(fig)


def _short(name: str, width: int = 34) -> str:
    return name if len(name) <= width else "..." + name[-(width - 3):]


def layer_graph(run: Run, origin: str | None) -> str | None:
    """The layer DAG in forward order, top to bottom; skip connections as arcs. The origin is
    red, layers with events orange, the edges between them bold."""
    nodes = [n for n in (run.dag.node(name) for name in run.dag.forward_order())
             if n is not None][:MAX_LAYERS * 2]
    if not nodes:
        return None
    y = {n.name: i for i, n in enumerate(nodes)}
    touched = {ev.layer_name for ev in run.events}
    with _figure(8.0, 0.6 + 0.26 * len(nodes)) as fig:
        ax = fig.add_subplot()
        ax.set_axis_off()
        from matplotlib.patches import PathPatch
        from matplotlib.path import Path as CurvePath

        widest = 0.0
        for a, b in run.dag.edges:
            if a not in y or b not in y:
                continue
            hot = a in touched and b in touched
            span = abs(y[b] - y[a])
            # the next layer: a short line; a skip: an arc to the left, wider the longer it is
            reach = 0.0 if span == 1 else 0.12 + 0.08 * math.sqrt(span)
            widest = max(widest, reach)
            curve = CurvePath([(0.0, y[a]), (-reach, y[a]), (-reach, y[b]), (0.0, y[b])],
                              [CurvePath.MOVETO, CurvePath.CURVE4, CurvePath.CURVE4,
                               CurvePath.CURVE4])
            ax.add_patch(PathPatch(curve, fill=False, linewidth=1.6 if hot else 0.6,
                                   edgecolor="#d62728" if hot else "#aaaaaa", zorder=1))
        for n in nodes:
            colour = "#d62728" if n.name == origin else (
                "#ff7f0e" if n.name in touched else "#dddddd")
            ax.scatter([0.0], [y[n.name]], s=60, color=colour, zorder=3,
                       edgecolors="#555555", linewidths=0.5)
            ax.text(0.08, y[n.name], f"{_short(n.name, 48)}  ({n.module_type})",
                    va="center", fontsize=7.5,
                    fontweight="bold" if n.name == origin else "normal")
        ax.set_xlim(-max(widest, 0.3) - 0.1, 3.0)
        ax.set_ylim(len(nodes) - 0.5, -0.5)
        return _svg(fig)


def recorder_heatmap(window: Window, order: Sequence[str]) -> str | None:
    """Layer x step, log10 of the gradient norm and of the largest activation, from a flight
    recorder window (missing values blank)."""
    import numpy as np

    stats = [s for s in ("grad_norm", "act_max_abs") if s in window.stats]
    rank = {name: i for i, name in enumerate(order)}
    layers = sorted(window.layers, key=lambda n: rank.get(n, len(rank)))[:MAX_LAYERS]
    if not stats or not layers or not window.steps:
        return None
    with _figure(8.0, 1.0 + 0.18 * len(layers)) as fig:
        axes = fig.subplots(1, len(stats), sharey=True, squeeze=False)[0]
        for ax, stat in zip(axes, stats, strict=True):
            k = window.stats.index(stat)
            grid = np.full((len(layers), len(window.steps)), np.nan)
            for i in range(len(window.steps)):
                for r, name in enumerate(layers):
                    v = window.values[i][window.layers.index(name)][k]
                    if v is not None and v > 0:
                        grid[r, i] = math.log10(v) if math.isfinite(v) else 40.0
            image = ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap="viridis",
                              interpolation="nearest",
                              extent=(window.steps[0] - 0.5, window.steps[-1] + 0.5,
                                      len(layers) - 0.5, -0.5))
            fig.colorbar(image, ax=ax, label=f"log10 {stat}", shrink=0.8)
            ax.set_xlabel("step")
            ax.set_title(stat, fontsize=9)
        axes[0].set_yticks(range(len(layers)), [_short(n, 28) for n in layers], fontsize=7)
        return _svg(fig)
