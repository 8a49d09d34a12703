"""diagnose(run): symptoms -> Bayesian network -> ranked, localized hypotheses.

The pipeline: `collect_evidence` asks every registered symptom for its distribution on the run;
the network (built once per registry version, cached) turns that into P(cause | evidence); each
cause node above `min_confidence` localizes itself and becomes a `Hypothesis`, ranked by
confidence, and handed back as a `Diagnosis`. A run is called healthy when no cause reaches
`REPORT_THRESHOLD`.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union, overload

from causal.confirmation import confirmation_lines, confirmations
from causal.errors import ArgumentError
from causal.hypothesis import Hypothesis
from causal.registry import REGISTRY, Registry
from causal.run_queries import first_origin, layer_label, loss_output_at_bound, loss_stall
from causal.schema.run import Run
from causal.symptoms.base import unread
from causal.symptoms.loss_level import TrivialEnd, trivial_end
from causal.verdict import REPORT_THRESHOLD, Verdict, verdict

if TYPE_CHECKING:
    from causal.calibration.parameters import FittedParameters

Parameters = Union["FittedParameters", str, "os.PathLike[str]", None]
#: Causes below this are left out of `diagnose`'s hypotheses by default.
MIN_CONFIDENCE = 0.05
#: The text report shows a hypothesis after the first only from this confidence up (the rest
#: stay in `Diagnosis.hypotheses` and `to_dict()`): the calibration map lifts small posteriors
#: toward 0.1-0.2, where they are noise to a reader.
SHOWN_AFTER_FIRST = 0.2
#: A failing run whose first cause takes at least this share of P(failing) has one root cause:
#: the report says so rather than "root cause unsure" when the failure itself is not certain.
CLEAR_SHARE = 0.75
#: The registries that have the built-ins (weak: a registry's id is reused once it is freed,
#: and a fresh registry with an old one's id must still get them).
_BUILTINS_LOADED: weakref.WeakSet[Registry] = weakref.WeakSet()


def builtin_registry(registry: Registry = REGISTRY) -> Registry:
    """`registry` with the built-in symptoms and causes registered (once; users' registrations
    are kept, and a user's cause or symptom of the same name wins). The default registry also
    gets the causes and symptoms installed packages declare as entry points."""
    if registry in _BUILTINS_LOADED:
        return registry
    from causal.causes import BUILTIN_CAUSES
    from causal.symptoms import BUILTIN_SYMPTOMS

    if registry is REGISTRY:
        registry.load_entry_points()  # installed packages' causes ("neuraldbg.causes" group)

    for sym in BUILTIN_SYMPTOMS:
        if sym.name not in registry.symptoms():
            registry.register_symptom(sym)
    for cause in BUILTIN_CAUSES:
        if cause.name not in registry.causes():
            registry.register_cause(cause)
    _BUILTINS_LOADED.add(registry)
    return registry


def collect_evidence(run: Run, registry: Registry) -> dict[str, dict[str, float]]:
    """Every registered symptom's (validated) distribution on `run`."""
    return {name: sym.evidence(run) for name, sym in registry.symptoms().items()}


def posteriors(run: Run, registry: Registry | None = None,
               parameters: Parameters = "shipped",
               evidence: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, float]:
    """P(cause present | the run's symptoms) for every registered cause, calibrated.

    `parameters`: "shipped" (the fitted tables and calibration that ship with the package; the
    hand-set tables, with a warning, when they do not fit the registry), None (the hand-set
    tables, uncalibrated), a fitted-parameters file or a `FittedParameters`. `evidence`: the
    run's `collect_evidence`, when the caller already has it."""
    from causal.calibration.parameters import effective
    from causal.network import get_network

    reg = builtin_registry() if registry is None else registry
    eff = effective(reg, parameters)
    if evidence is None:
        evidence = collect_evidence(run, reg)
    return eff.calibrate(get_network(eff.registry).posteriors(evidence))


def run_verdict(run: Run, registry: Registry | None = None, parameters: Parameters = "shipped",
                evidence: Mapping[str, Mapping[str, float]] | None = None) -> Verdict:
    """The run's `Verdict` (`causal.verdict`): P(failing), and per cause P(present) and
    P(root cause), calibrated. `parameters` and `evidence` as in `posteriors`."""
    from causal.calibration.parameters import effective
    from causal.network import get_network

    reg = builtin_registry() if registry is None else registry
    eff = effective(reg, parameters)
    if evidence is None:
        evidence = collect_evidence(run, reg)
    return verdict(get_network(eff.registry), evidence, eff.calibrate, eff.share_temperature,
                   eff.sharp_temperature)


@dataclass(frozen=True)
class Diagnosis(Sequence[Hypothesis]):
    """What `diagnose` hands back: the ranked `hypotheses` (highest confidence first: the
    confidence that the cause is the run's root cause), `failing` (the confidence that some
    cause is present; None: judged from the hypotheses), whether the run is `healthy`
    (`failing` below `threshold`), the symptoms' `evidence`, and `format()`, the report people
    read. It is also the sequence of its hypotheses (`for h in diagnose(run)`,
    `diagnose(run)[0]`)."""

    run: Run = field(repr=False)
    hypotheses: tuple[Hypothesis, ...]
    evidence: Mapping[str, Mapping[str, float]] = field(default_factory=dict, repr=False)
    threshold: float = REPORT_THRESHOLD
    failing: float | None = None
    #: interventions `neuraldbg confirm` tried on the failing step (`causal.confirmation`)
    confirmed_by: tuple[dict[str, Any], ...] = ()
    #: the confidence that the run fails for a cause outside the catalogue (`causal.verdict`)
    unexplained: float = 0.0

    @property
    def healthy(self) -> bool:
        return is_healthy(self.hypotheses, self.threshold, self.failing)

    @property
    def stalled(self) -> bool:
        """Whether the loss did not learn (`run_queries.loss_stall`): a healthy verdict then
        says so, and names the candidates, since a run that did not learn is no healthy run
        to its user."""
        return loss_stall(self.run) is not None

    @property
    def top(self) -> Hypothesis | None:
        """The first-ranked hypothesis of a failing run, else None (healthy, or failing for no
        catalogued cause that reaches `min_confidence`)."""
        return None if self.healthy or not self.hypotheses else self.hypotheses[0]

    def format(self, max_evidence: int = 6) -> str:
        """The text report: `[0.91] description`, evidence lines, fixes, the symptoms."""
        text = format_diagnosis(self.run, list(self.hypotheses), self.evidence,
                                self.threshold, max_evidence, self.failing, self.unexplained)
        return "\n".join([text, *confirmation_lines(self.confirmed_by)])

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the hypotheses, the verdict and the symptoms' distributions."""
        return {"healthy": self.healthy, "stalled": self.stalled, "threshold": self.threshold,
                "failing": self.failing, "unexplained": self.unexplained,
                "recording_stopped": recording_stopped(self.run),
                "confirmed_by": [dict(c) for c in self.confirmed_by],
                "hypotheses": [h.to_dict() for h in self.hypotheses],
                "evidence": {k: dict(v) for k, v in self.evidence.items()}}

    def __str__(self) -> str:
        return self.format()

    @overload
    def __getitem__(self, index: int) -> Hypothesis: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Hypothesis]: ...

    def __getitem__(self, index: int | slice) -> Hypothesis | Sequence[Hypothesis]:
        return self.hypotheses[index]

    def __len__(self) -> int:
        return len(self.hypotheses)

    def __iter__(self) -> Iterator[Hypothesis]:
        return iter(self.hypotheses)


def _as_run(run: Run | str | os.PathLike[str]) -> Run:
    """A Run as given, or read from a run file's path."""
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        from causal.schema.run_file import load_run

        return load_run(run)
    raise ArgumentError(f"diagnose() takes a Run or the path of a run file, got "
                        f"{type(run).__name__}: pass dbg.run, load_run(path) or the path itself")


def _check_call(registry: Registry | None, min_confidence: float) -> None:
    if registry is not None and not isinstance(registry, Registry):
        raise ArgumentError(f"registry must be a causal Registry or None (the built-in one), "
                            f"got {type(registry).__name__}")
    if isinstance(min_confidence, bool) or not isinstance(min_confidence, (int, float)) \
            or not 0.0 <= min_confidence <= 1.0:
        raise ArgumentError(f"min_confidence must be a number in [0, 1], got {min_confidence!r}")


def diagnose(run: Run | str | os.PathLike[str], registry: Registry | None = None,
             min_confidence: float = MIN_CONFIDENCE, parameters: Parameters = "shipped"
             ) -> Diagnosis:
    """The `Diagnosis` of `run` (a Run, or a run file's path): hypotheses for every cause whose
    root-cause confidence is at or above `min_confidence` (before the first answer was sharpened:
    `Verdict.listed`), ranked; a failing confidence below
    `REPORT_THRESHOLD` means a healthy run. `parameters` as in `posteriors`."""
    run = _as_run(run)
    _check_call(registry, min_confidence)
    reg = builtin_registry() if registry is None else registry
    evidence = collect_evidence(run, reg)
    judged = run_verdict(run, reg, parameters, evidence=evidence)
    causes = reg.causes()
    return Diagnosis(run, tuple(causes[name].hypothesis(run, p)
                                for name, p in judged.listed(min_confidence)),
                     evidence, failing=judged.failing,
                     confirmed_by=confirmations(run), unexplained=judged.unexplained)


def is_healthy(hypotheses: Sequence[Hypothesis], threshold: float = REPORT_THRESHOLD,
               failing: float | None = None) -> bool:
    """No cause present at `threshold`: `failing` below it (when known: given, or the
    `Diagnosis`'s own), else no hypothesis reaching it."""
    if failing is None:
        failing = getattr(hypotheses, "failing", None)
    if failing is not None:
        return failing < threshold
    return not any(h.confidence >= threshold for h in hypotheses)


def format_diagnosis(run: Run, hypotheses: list[Hypothesis],
                     evidence: Mapping[str, Mapping[str, float]] | None = None,
                     threshold: float = REPORT_THRESHOLD, max_evidence: int = 6,
                     failing: float | None = None, unexplained: float = 0.0) -> str:
    """The report people read: `[0.91] description`, evidence lines, fix lines. `failing`: the
    confidence that the run is failing (None: judged from the hypotheses); when no single
    cause takes most of it, a first line says so. `unexplained`: the part of `failing` no
    catalogued cause explains."""
    lines: list[str] = []
    if (stopped := recording_stopped(run)) is not None:
        lines.append(stopped)
    if not len(run.series) and not run.events:  # the priors alone are no diagnosis
        lines.append("Nothing to diagnose: no training step was recorded.")
        said = list(run.meta.get("warnings") or ())
        lines += [f"  {w}" for w in said] or [
            "  Did the loop call the monitored model's forward, with gradients on, inside "
            "the monitor?"]
        return "\n".join(lines)
    if is_healthy(hypotheses, threshold, failing):
        origin = first_origin(run)
        stall = loss_stall(run) if origin is None else None
        if stall is not None:  # no cause stands out, but the run did not learn
            head, tail = stall
            lines.append(
                f"Stalled, cause unclear: the loss ended at {tail / head:.0%} of where it "
                f"started ({head:.4g} in the first steps, {tail:.4g} over the last ones), and "
                f"no root cause reaches {threshold:.2f}.")
            if (trivial := learned_nothing_line(run)) is not None:
                lines.append(f"  {trivial}")
            others = hypotheses[:3]
        elif origin is None:
            lines.append(f"Healthy: no root cause reaches {threshold:.2f}.")
            others = [h for h in hypotheses if h.confidence >= SHOWN_AFTER_FIRST]
        else:  # it went non-finite: a failure none of the known causes explains well
            birth = origin.birth
            where = f"{birth.direction or '?'}, {layer_label(run, origin.layer_name)}"
            if (out := loss_output_at_bound(origin)) is not None:
                where += (f", on outputs of {layer_label(run, out)} of which "
                          f"{birth.output_zeros or 0} were exactly 0 and "
                          f"{birth.output_ones or 0} exactly 1")
            lines.append(
                f"Unexplained failure: the first non-finite value was born at step "
                f"{origin.step} ({where}), but no root cause reaches {threshold:.2f}.")
            others = hypotheses
        if others:
            lines.append("  weaker candidates: " + ", ".join(
                f"{h.cause} {h.confidence:.2f}" for h in others[:3]))
        if stall is not None:
            lines += [f"  {h}" + (f" ({h.note})" if h.note else "") for h in others[:1]]
        if (origin is not None or stall is not None) and evidence:
            lines.append(_symptoms_line(evidence))
            lines += _unseen_lines(run)
        return "\n".join(lines)
    if failing is not None and (not hypotheses or hypotheses[0].confidence < threshold):
        close = [h.cause for h in hypotheses if h.confidence >= SHOWN_AFTER_FIRST]
        if unexplained >= CLEAR_SHARE * failing or not hypotheses:
            closest = ", ".join(f"{h.cause} {h.confidence:.2f}" for h in hypotheses[:3])
            lines.append(
                f"Failing ({failing:.2f}), cause not in the catalogue: {_how_it_failed(run)}, "
                f"and no known cause predicts the rest of the evidence (unexplained "
                f"{unexplained:.2f})" + (f"; the closest: {closest}." if closest else "."))
        elif hypotheses[0].confidence >= CLEAR_SHARE * failing:
            # one cause, a failure not quite certain
            top = hypotheses[0]
            lines.append(f"Failing ({failing:.2f}, not certain); if it is, the root cause is "
                         f"{top.cause} ({top.confidence / failing:.0%} of it):")
        else:
            outside = (f" (a cause outside the catalogue fits it best, {unexplained:.2f}: "
                       f"{_how_it_failed(run)}, and no known cause predicts the rest)"
                       if hypotheses and unexplained > hypotheses[0].confidence else "")
            lines.append(
                f"Failing ({failing:.2f}), root cause unsure: the evidence fits "
                + (" and ".join(close[:3]) if len(close) > 1 else "no single cause well")
                + outside + "; each is below with its evidence and fixes.")
    for h in hypotheses:
        if h is not hypotheses[0] and h.confidence < SHOWN_AFTER_FIRST:
            break
        lines.append(str(h))
        if h.note:
            lines.append(f"  ({h.note})")
        for ev in h.evidence[:max_evidence]:
            lines.append(f"  step {ev.step} . {ev.layer_name or '(model)'}: {ev.from_state} -> "
                         f"{ev.to_state} ({ev.value:.3g})")
        for fix in h.fixes[:3]:
            lines.append(f"  fix: {fix}")
    if first_origin(run) is None and (trivial := learned_nothing_line(run)) is not None:
        lines.append(trivial)
    if evidence:
        lines.append(_symptoms_line(evidence))
        lines += _unseen_lines(run)
    return "\n".join(lines)


def _how_it_failed(run: Run) -> str:
    """Where the first non-finite value was born, else how far the loss fell."""
    origin = first_origin(run)
    if origin is not None:
        return (f"the first non-finite value was born at step {origin.step} "
                f"({origin.birth.direction or '?'}, {layer_label(run, origin.layer_name)})")
    if (trivial := learned_nothing(run)) is not None:
        return trivial
    stall = loss_stall(run)
    if stall is not None:
        return f"the loss ended at {stall[1] / stall[0]:.0%} of where it started"
    return "its symptoms say it is failing"


#: How surely (`TrivialEnd.at_trivial`) the loss must have ended at the trivial predictor's loss
#: for the report to say the model learned nothing: more likely than not.
LEARNED_NOTHING_AT = 0.5


def learned_nothing_end(run: Run) -> TrivialEnd | None:
    """Where the loss ended against the trivial predictor's (`symptoms.loss_level`), when it
    more likely than not ended there; else None."""
    end = trivial_end(run)
    return end if end is not None and end.at_trivial >= LEARNED_NOTHING_AT else None


def learned_nothing(run: Run) -> str | None:
    """A sentence when the loss ended where a model that ignores its inputs ends
    (`learned_nothing_end`), else None."""
    end = learned_nothing_end(run)
    return None if end is None else f"{end.sentence()}: the model learned nothing from its inputs"


def learned_nothing_line(run: Run) -> str | None:
    """`learned_nothing` as a sentence of its own (capitalised, with its full stop)."""
    said = learned_nothing(run)
    return None if said is None else f"{said[0].upper()}{said[1:]}."


def recording_stopped(run: Run) -> str | None:
    """A sentence when the monitor stopped recording before the run ended (its own error, or
    storage that failed), else None: the diagnosis then covers only what was recorded."""
    reason = run.meta.get("storage_error") or run.meta.get("internal_error")
    if not reason:
        return None
    steps = run.series.steps
    after = f"after step {steps[-1]}" if steps else "before any step was stored"
    kind = "the run file could not be written" if run.meta.get("storage_error") else \
        "neuraldbg hit an internal error"
    return (f"Recording stopped {after}: {kind} ({reason}). The diagnosis covers only what "
            "was recorded before.")


def _unseen_lines(run: Run) -> list[str]:
    """What the run could not observe, said: missing evidence is not evidence of health."""
    if len(run.series) and not run.series.get("target_max_abs"):
        if run.series.get("target_entropy"):
            return ["targets seen as class labels only: their frequencies are counted (what a "
                    "model that ignores its inputs scores), but labels have no scale, so no "
                    "corrupt or outlying target was looked for"]
        return ["targets not seen: the loss took no float targets or class labels the monitor "
                "could find, so corrupt or unscaled targets were not checked; "
                "dbg.record_loss(loss, target=y) checks them"]
    return []


def shown_state(dist: Mapping[str, float]) -> str:
    """A symptom's most likely state; `unobserved` where the run could not say (every state
    alike: `Symptom.unobserved`), not the first of them."""
    if unread(dist):
        return "unobserved"
    return max(dist, key=dist.__getitem__)


def _symptoms_line(evidence: Mapping[str, Mapping[str, float]]) -> str:
    shown = {k: shown_state(v) for k, v in evidence.items()}
    return "symptoms: " + ", ".join(f"{k}={s}" for k, s in shown.items())
