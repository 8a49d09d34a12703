"""The report page: one self-contained HTML file (inline CSS and SVG, no script from elsewhere, no
external file), for failing and healthy runs alike. The verdict first; then the loss curve, the
per-layer timeline, the layer graph, the flight recorder around the first event, every hypothesis
with its evidence and fixes, the symptoms, the run's settings and the monitor's warnings."""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from causal.confirmation import confirmation_lines
from causal.diagnose import (
    MIN_CONFIDENCE,
    Diagnosis,
    diagnose,
    learned_nothing_line,
    recording_stopped,
    shown_state,
)
from causal.errors import NeuralDbgError
from causal.html_report import figures
from causal.schema.run import Run

#: The sections every report has, in order (a test checks them).
SECTIONS = ("verdict", "loss", "timeline", "graph", "recorder", "hypotheses", "symptoms",
            "settings", "warnings")

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;
max-width:980px;padding:24px;color:#222;line-height:1.45}
h1{font-size:1.5em;margin:0 0 4px} h2{font-size:1.15em;margin:28px 0 8px;
border-bottom:1px solid #ddd;padding-bottom:4px} .sub{color:#666;font-size:.9em}
.verdict{border-left:6px solid #d62728;background:#fff5f5;padding:12px 16px;margin:16px 0}
.verdict.healthy{border-color:#2ca02c;background:#f4fbf4}
.verdict.unsure{border-color:#ff7f0e;background:#fff8ef}
.verdict .big{font-size:1.2em;font-weight:600} .fix{color:#1f5f1f}
table{border-collapse:collapse;font-size:.88em;margin:6px 0} td,th{border:1px solid #e3e3e3;
padding:3px 8px;text-align:left;vertical-align:top} th{background:#f6f6f6}
.hyp{border:1px solid #e3e3e3;border-radius:4px;padding:8px 12px;margin:10px 0}
.conf{display:inline-block;min-width:3.2em;font-weight:600}
code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em}
svg{max-width:100%;height:auto} .none{color:#888;font-style:italic}
"""


class MissingDependencyError(NeuralDbgError, ImportError):
    """An optional dependency a feature needs is not installed; the message says how to get it."""


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise MissingDependencyError(
            "the HTML report draws its figures with matplotlib, which is not installed: "
            "pip install matplotlib (or pip install 'neuraldbg[bench]')") from e


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def render(run: Run, diagnosis: Diagnosis | None = None) -> str:
    """The report of `run` as one HTML document (its diagnosis computed when not given)."""
    _require_matplotlib()
    dx = diagnosis if diagnosis is not None else diagnose(run, min_confidence=0.0)
    top = dx.top
    origin = top.layer if top is not None else None
    first = figures.first_events(run)
    at = top.step if top is not None and top.step is not None else (
        first[0].step if first else None)
    window = run.window_at(at) if at is not None else (run.windows[-1] if run.windows else None)
    parts = [
        _section("verdict", "Verdict", _verdict(run, dx)),
        _section("loss", "Loss", figures.loss_curve(run, top.step if top else None)),
        _section("timeline", "Layers over time (forward order, top to bottom)",
                 figures.timeline(run), empty="No layer left its healthy regime."),
        _section("graph", "Layer graph", figures.layer_graph(run, origin),
                 "red: where the failure starts; orange: layers with events; the bold edges "
                 "join them"),
        _section("recorder", "Flight recorder around the failure" if at is not None
                 else "Flight recorder, the last window",
                 figures.recorder_heatmap(window, run.dag.forward_order())
                 if window is not None else None,
                 f"the window ending at step {window.end_step}" if window is not None else ""),
        _section("hypotheses", "Hypotheses", _hypotheses(dx)),
        _section("symptoms", "Symptoms", _symptoms(dx.evidence)),
        _section("settings", "Run", _settings(run)),
        _section("warnings", "Warnings from the monitor", _warnings(run)),
    ]
    title = f"neuraldbg report: {run.meta.get('model_class', 'run')}"
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n"
            f"<h1>{_e(title)}</h1><div class=\"sub mono\">{_e(run.path or '(in memory)')}</div>\n"
            + "\n".join(parts) + "\n</body></html>\n")


def write_report(run: Run, out: str | os.PathLike[str] | None = None,
                 diagnosis: Diagnosis | None = None) -> Path:
    """Write `render(run)` to `out` (default: the run file's path with `.html`); the path."""
    text = render(run, diagnosis)
    if out is None:
        if run.path is None:
            raise NeuralDbgError("a run held in memory has no file to name the report after: "
                                 "pass out='report.html'")
        out = Path(run.path).with_suffix(".html")
    path = Path(out)
    path.write_text(text, encoding="utf-8")
    return path


def _section(key: str, heading: str, body: str | None, caption: str = "",
             empty: str = "Nothing recorded for this part.") -> str:
    inner = body if body else f"<p class=\"none\">{_e(empty)}</p>"
    cap = f"<p class=\"sub\">{_e(caption)}</p>" if caption and body else ""
    return f"<section id=\"{key}\"><h2>{_e(heading)}</h2>{cap}{inner}</section>"


def _verdict(run: Run, dx: Diagnosis) -> str:
    lines = []
    confirmed = [f"<p class=\"fix\">{_e(line)}</p>" for line in confirmation_lines(dx.confirmed_by)]
    stopped = recording_stopped(run)
    if stopped:
        lines.append(f"<p>{_e(stopped)}</p>")
    top = dx.top
    if top is None:
        weaker = ", ".join(f"{h.cause} {h.confidence:.2f}" for h in dx.hypotheses[:3])
        state = ("Failing, cause not in the catalogue" if not dx.healthy
                 else "Stalled, cause unclear" if dx.stalled else "Healthy")
        lines.append(f"<div class=\"big\">{_e(state)}</div><p>{_e(dx.format().splitlines()[0])}"
                     f"</p><p class=\"sub\">weaker candidates: {_e(weaker or 'none')}</p>")
        lines += _learned_nothing(run)
        lines += confirmed
        kind = "unsure" if dx.stalled or not dx.healthy else "healthy"
        return f"<div class=\"verdict {kind}\">{''.join(lines)}</div>"
    where = f" in <code>{_e(top.layer)}</code>" if top.layer else ""
    when = f" from step {top.step}" if top.step is not None else ""
    lines.append(f"<div class=\"big\">{_e(top.cause)} &middot; {top.confidence:.2f}{where}"
                 f"{when}</div><p>{_e(top.description)}</p>")
    if top.fixes:
        lines.append(f"<p class=\"fix\">First fix: {_e(top.fixes[0])}</p>")
    first = dx.format().splitlines()[0]
    if not first.startswith("[") and not first.startswith("Recording stopped"):
        lines.append(f"<p class=\"sub\">{_e(first)}</p>")  # "root cause unsure" and the like
    lines += _learned_nothing(run)
    lines += confirmed
    kind = "" if dx.failing is None or top.confidence >= 0.5 else "unsure"
    return f"<div class=\"verdict {kind}\">{''.join(lines)}</div>"


def _learned_nothing(run: Run) -> list[str]:
    """The sentence of a finite run whose loss ended at the trivial predictor's, as a line."""
    said = learned_nothing_line(run)
    return [f"<p class=\"sub\">{_e(said)}</p>"] if said else []


def _hypotheses(dx: Diagnosis) -> str:
    if not dx.hypotheses:
        return ""
    shown = [h for h in dx.hypotheses if h.confidence >= MIN_CONFIDENCE] or dx.hypotheses[:1]
    out = []
    for h in shown:
        rows = "".join(
            f"<tr><td>{ev.step}</td><td class=\"mono\">{_e(ev.layer_name)}</td>"
            f"<td>{_e(ev.from_state)} &rarr; {_e(ev.to_state)}</td><td>{ev.value:.3g}</td></tr>"
            for ev in h.evidence[:12])
        table = (f"<table><tr><th>step</th><th>layer</th><th>change</th><th>value</th></tr>"
                 f"{rows}</table>") if rows else ""
        fixes = "".join(f"<li class=\"fix\">{_e(f)}</li>" for f in h.fixes)
        note = f"<p class=\"sub\">{_e(h.note)}</p>" if h.note else ""
        out.append(f"<div class=\"hyp\"><span class=\"conf\">{h.confidence:.2f}</span> "
                   f"<b>{_e(h.cause)}</b>: {_e(h.description)}{note}{table}"
                   f"{f'<ul>{fixes}</ul>' if fixes else ''}</div>")
    rest = len(dx.hypotheses) - len(shown)
    if rest:
        out.append(f"<p class=\"sub\">{rest} more below {MIN_CONFIDENCE:.2f}: "
                   + ", ".join(f"{_e(h.cause)} {h.confidence:.2f}"
                               for h in dx.hypotheses[len(shown):]) + "</p>")
    return "".join(out)


def _symptoms(evidence: Mapping[str, Mapping[str, float]]) -> str:
    if not evidence:
        return ""
    rows = []
    for name, dist in evidence.items():
        best = shown_state(dist)
        spread = ", ".join(f"{_e(s)} {p:.2f}" for s, p in sorted(dist.items(),
                                                              key=lambda kv: -kv[1]))
        rows.append(f"<tr><td class=\"mono\">{_e(name)}</td><td><b>{_e(best)}</b></td>"
                    f"<td>{spread}</td></tr>")
    return ("<table><tr><th>symptom</th><th>most likely</th><th>distribution</th></tr>"
            + "".join(rows) + "</table>")


def _settings(run: Run) -> str:
    meta = run.meta
    rows = [("model", f"{meta.get('model_class', '?')}, {meta.get('n_units', '?')} monitored "
                      f"layers, {meta.get('n_params', '?')} parameters"),
            ("steps recorded", f"{len(run.series)} (status {meta.get('status', '?')})"),
            ("device / dtype", f"{meta.get('device', '?')} / {meta.get('param_dtype', '?')}"),
            ("scaler", meta.get("scaler") or "none"),
            ("preset", meta.get("preset", "?")),
            ("layer graph", f"{run.dag.method}, {len(run.dag.nodes)} nodes, "
                            f"{len(run.dag.edges)} edges")]
    latest: dict[str, str] = {}
    for ch in run.settings:
        latest.setdefault(ch.key, ch.value)  # the first value; changes listed below
    for key, value in latest.items():
        changes = [c for c in run.settings if c.key == key]
        later = f" (then {len(changes) - 1} changes, last {changes[-1].value} at step " \
                f"{changes[-1].step})" if len(changes) > 1 else ""
        rows.append((key, f"{value}{later}"))
    for key in ("torch_version", "neuraldbg_version", "created", "ended"):
        if meta.get(key):
            rows.append((key, meta[key]))
    return "<table>" + "".join(f"<tr><th>{_e(k)}</th><td class=\"mono\">{_e(v)}</td></tr>"
                               for k, v in rows) + "</table>"


def _warnings(run: Run) -> str:
    said = list(run.meta.get("warnings") or ())
    for key in ("internal_error", "storage_error"):
        if run.meta.get(key):
            said.append(f"{key.replace('_', ' ')}: {run.meta[key]}")
    return "<ul>" + "".join(f"<li>{_e(w)}</li>" for w in said) + "</ul>" if said else ""
