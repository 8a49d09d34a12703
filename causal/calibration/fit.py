"""Fitting the network's parameters and a calibration map on a table of labelled observations.

Torch-free: the input is a table of `Observation`s (one per scenario x seed: its label and the
evidence every registered symptom gave on the run), collected by `neuraldbg.suite.fit_driver` or by
hand. The output is a `FittedParameters`, a versioned JSON-safe record that `apply`s to a registry
(fitted likelihoods and leaks) and `calibrate`s posteriors.

**Likelihoods and leaks (Dirichlet posterior).** The network's symptom CPDs are
log-linear (`causal.network.combine`): the column where exactly one cause is present *is* that
cause's `likelihoods[symptom]`, the column where every cause is absent *is* the symptom's `leak`,
and every other column is derived from those. So the free parameters are exactly one column per
(cause, symptom edge) plus one leak per symptom, and each training run, which has one known cause
(or none: "healthy"), observes one of these columns and nothing else. For each cause C we build a
sub-model C -> (each symptom C raises), fully observed: C = "present" rows are C's runs, C =
"absent" rows are the healthy runs (runs of other causes are left out: they observe other
columns). A Bayesian estimator (prior "dirichlet") fits it with pseudo-counts
`ess * hand-set table`: `ess * likelihoods[s]` in the present column, `ess * leak[s]` in the absent
one, so each fitted column is the Dirichlet posterior mean `(ess * hand_set + counts) / (ess + n)`.
The present column becomes the cause's fitted likelihoods; the absent column the symptom's fitted
leak (every sub-model sees the same healthy rows and the same leak prior, so the absent columns
agree; symptoms no cause raises keep their hand-set leak). A cause or healthy with no training run
keeps its hand-set table; a huge `ess` keeps every table; a small one follows the data.

Soft evidence (a symptom that could not say one state: a magnitude near a threshold, targets
never seen, a signal the run could not read at all) is a likelihood over the states, as the
network reads it at diagnosis, not a distribution over them. It is counted by EM (`_imputed`):
each run's state posterior under its label's column, `column x evidence` normalised, the column
the Dirichlet posterior mean of those posteriors, iterated to its fixed point. So a signal a
run could not read adds nothing its label's other runs do not say, where counting it as a
uniform distribution pulled every column toward uniform (a fifth of the fitted runs cannot
read the gradient through the depth, two in five never show their targets). On the fitted
splits it lowered the leave-one-family-out log-loss of the uncalibrated tables from 0.217 to
0.192. The imputed posteriors are then counted fractionally: each observation becomes a few
weighted rows (`_coupled_rows`, a quantile coupling of its symptoms' distributions: the unit
interval is cut at every symptom's cumulative probabilities, and each piece is one row,
weighted by its length, taking in each symptom the state whose cumulative interval holds it),
so every symptom's weighted state counts equal the posterior exactly, and pgmpy's weighted
counting (`sample_weight`) gives the expected counts. `fit_tables` computes those means in
closed form from the summed posteriors; `fit_tables_pgmpy` fits the same sub-models with
pgmpy's `DiscreteBayesianEstimator`, and a test holds the two equal. A leave-one-family-out
fold imputes again only its family's label without the family (the other labels' columns do
not depend on it).

**Priors are not re-estimated.** They stay the hand-set values: the suite's mix of causes is a
design choice (about three families per cause, six healthy), not the frequency of causes behind
failing runs in the wild, so fitting priors to it would teach the network the suite's layout.

**Calibration.** A map on the logit, `p' = sigmoid(a * logit(p) + b)`, applied to every
cause's posterior, fitted (scipy, L-BFGS-B) on the TRAINING observations only, to minimise the
log-loss of "the top-ranked cause is the true one" against the calibrated top posterior, with a
weak Gaussian prior pulling (a, b) to the identity (1, 0) (`CALIBRATION_PRIOR_SD`), so a handful
of perfectly separated runs cannot push it to infinity. The posteriors it is fitted on are
cross-fitted by family: each training family's runs are scored by tables fitted without that
family, which is the situation on a held-out family (fitting on in-sample posteriors would learn
how over-confident the network is on data it has already seen).

`method="platt"` fits a and b: b moves the report threshold, which a fit needs healthy runs
with alarming-looking evidence to hold. On the 55 training families alone there were none, and
a Platt map fitted there (b = 1.9) turned 3 of 12 held-out healthy runs into false alarms, so
the default was a temperature (`method="temperature"`, b = 0: only the sharpness changes, and
p = 0.5 stays 0.5). Fitted on train, validation and probe together (316 families, 138 healthy
runs, many of them hard negatives), the Platt map was the default for a while: it halved the
failing runs called healthy (16 against 34). Since the network reads the lr itself
(`lr_level`), the temperature is the default again: leave-one-family-out it calls 11 failing
runs healthy (Platt 6) and no healthy run failing (Platt 2), at log-loss 0.260 (Platt 0.244),
and the Platt map's b = 0.49 made a Hugging Face BART a false alarm in the zoo.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import random
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causal.calibration.calibrate import CALIBRATION_PRIOR_SD, fit_calibration, log_loss, top_cause
from causal.calibration.fingerprint import symptom_signature
from causal.calibration.parameters import (
    EPS,
    FORMAT,
    SCHEMA_VERSION,
    SHIPPED_PATH,
    Calibration,
    FitError,
    FittedParameters,
    _digest,
)
from causal.registry import Registry
from causal.verdict import CONFIDENT_ANSWER, CONFIDENT_WRONG

if TYPE_CHECKING:
    from causal.verdict import Verdict

__all__ = [
    "CALIBRATION_PRIOR_SD", "DEFAULT_ESS", "ESS_CANDIDATES", "FORMAT", "HEALTHY", "SCHEMA_VERSION",
    "SHIPPED_PATH", "Calibration", "FitError", "FittedParameters", "Observation",
    "fit_calibration", "fit_parameters", "fit_tables", "fit_tables_pgmpy", "load_observations",
    "log_loss", "observations_path", "save_observations", "select_ess",
    "select_share_temperature", "select_sharp_temperature", "split_families",
    "top_cause",
]

HEALTHY = "healthy"
#: Default equivalent sample size of the hand-set tables (pseudo-counts per column).
DEFAULT_ESS = 10.0
_CAUSE_STATES = ("absent", "present")



# ---------------------------------------------------------------- the table of observations


@dataclasses.dataclass(frozen=True)
class Observation:
    """One labelled run: which scenario (and family: its file stem), which seed, the true cause
    (a cause name or "healthy") and every symptom's distribution on the run."""

    scenario: str
    family: str
    seed: int
    cause: str
    evidence: Mapping[str, Mapping[str, float]]

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "family": self.family, "seed": self.seed,
                "cause": self.cause,
                "evidence": {s: dict(d) for s, d in self.evidence.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Observation:
        try:
            return cls(str(data["scenario"]), str(data["family"]), int(data["seed"]),
                       str(data["cause"]),
                       {str(s): {str(k): float(v) for k, v in d.items()}
                        for s, d in data["evidence"].items()})
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise FitError(f"not an observation record ({type(e).__name__}: {e}): "
                           f"{str(dict(data))[:200]}") from e


# ---------------------------------------------------------------- the table, saved

#: The `format` field of a saved table of observations.
OBSERVATIONS_FORMAT = "neuraldbg-observations"


def observations_path(parameters_path: str | os.PathLike[str]) -> Path:
    """Where `neuraldbg fit` keeps the observations next to the parameters it wrote:
    `fitted.json` -> `fitted.observations.json`."""
    p = Path(parameters_path)
    return p.with_name(p.stem + ".observations.json")


def save_observations(path: str | os.PathLike[str], observations: Sequence[Observation],
                      registry: Registry, instrument: str) -> None:
    """Write the table a fit was made from (sorted; floats exact, so a fit from the table
    reproduces the parameters to the bit), with the symptom signature it was observed under:
    the fit can be checked and reproduced without training anything."""
    rows = sorted((ob.to_dict() for ob in observations),
                  key=lambda d: (d["family"], d["scenario"], d["seed"]))
    data = {"format": OBSERVATIONS_FORMAT, "symptom_signature": symptom_signature(registry),
            "instrument": instrument, "observations": rows}
    Path(path).write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


def load_observations(path: str | os.PathLike[str], registry: Registry) -> list[Observation]:
    """The table `save_observations` wrote; FitError when it was observed by other symptom code
    than `registry`'s (re-run `neuraldbg fit`)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FitError(f"cannot read observations {path}: {e}") from e
    if not isinstance(data, dict) or data.get("format") != OBSERVATIONS_FORMAT:
        raise FitError(f"{path} is not a table of observations (format "
                       f"{OBSERVATIONS_FORMAT!r})")
    if data.get("symptom_signature") != symptom_signature(registry):
        raise FitError(f"{path} was observed with other symptom code than this registry's; "
                       "re-run `neuraldbg fit` to observe the runs again")
    return [Observation.from_dict(d) for d in data.get("observations", ())]


# ---------------------------------------------------------------- the family split


def split_families(names: Mapping[str, str], held_out_fraction: float = 0.34,
                   seed: int = 0) -> tuple[list[str], list[str]]:
    """Split families (whole scenario files, never seeds) into (training, held-out), sorted.

    `names` maps each family to its label (a cause or "healthy"). Per label, with n families:
    n >= 2 holds out round(n * held_out_fraction) of them, at least 1 and at most n - 1 (so at
    least one family of every label trains, and one of every label is scored); n == 1 trains
    (a label with a single family cannot be both fitted and scored). Deterministic: the choice is
    a shuffle seeded by (`seed`, label), independent of the other labels and of dict order.
    """
    if not 0.0 <= held_out_fraction < 1.0:
        raise FitError(f"held_out_fraction {held_out_fraction!r} must be in [0, 1)")
    by_label: dict[str, list[str]] = {}
    for family, label in names.items():
        by_label.setdefault(label, []).append(family)
    train: list[str] = []
    held: list[str] = []
    for label in sorted(by_label):
        fams = sorted(by_label[label])
        k = 0
        if len(fams) >= 2:
            k = min(len(fams) - 1, max(1, round(len(fams) * held_out_fraction)))
        random.Random(f"neuraldbg-split:{seed}:{label}").shuffle(fams)
        held += fams[:k]
        train += fams[k:]
    return sorted(train), sorted(held)


# ---------------------------------------------------------------- fitting


def _pg() -> Any:
    """pgmpy's estimator pieces, imported quietly (FutureWarnings at import, as in network)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import numpy as np
        import pandas as pd
        from pgmpy.models import DiscreteBayesianNetwork
        from pgmpy.parameter_estimator import DiscreteBayesianEstimator
    return np, pd, DiscreteBayesianNetwork, DiscreteBayesianEstimator


def _coupled_rows(evidence: Mapping[str, Mapping[str, float]], symptoms: Sequence[str],
                  states: Mapping[str, Sequence[str]]) -> list[tuple[float, dict[str, str]]]:
    """(weight, one state per symptom) rows whose weighted state counts are, per symptom,
    exactly its distribution in `evidence` (a quantile coupling; weights sum to 1)."""
    cuts = {0.0, 1.0}
    cums: dict[str, list[float]] = {}
    for s in symptoms:
        acc, cum = 0.0, []
        for st in states[s]:
            acc += float(evidence[s].get(st, 0.0))
            cum.append(min(acc, 1.0))
        cum[-1] = 1.0
        cums[s] = cum
        cuts.update(cum)
    points = sorted(cuts)
    rows = []
    for lo, hi in itertools.pairwise(points):
        if hi - lo <= 0.0:
            continue
        mid = (lo + hi) / 2.0
        row = {}
        for s in symptoms:
            # (a sliver between two adjacent floats can put mid on its upper end)
            idx = next((i for i, c in enumerate(cums[s]) if c > mid), len(cums[s]) - 1)
            row[s] = states[s][idx]
        rows.append((hi - lo, row))
    return rows


def _check_observations(observations: Sequence[Observation], registry: Registry,
                        needed: Iterable[str]) -> None:
    causes, symptoms = registry.causes(), registry.symptoms()
    for ob in observations:
        where = f"observation {ob.scenario!r} seed {ob.seed}"
        if ob.cause != HEALTHY and ob.cause not in causes:
            raise FitError(f"{where} is labelled {ob.cause!r}, which is not a registered cause "
                           f"(registered: {sorted(causes)}); register it or drop its scenarios")
        unknown = sorted(set(ob.evidence) - set(symptoms))
        if unknown:
            raise FitError(f"{where} has evidence for unregistered symptoms {unknown}; collect "
                           "the observations again with this registry")
        missing = sorted(set(needed) - set(ob.evidence))
        if missing:
            raise FitError(f"{where} has no evidence for symptoms {missing}; collect the "
                           "observations again with this registry")
        for s, dist in ob.evidence.items():
            total = math.fsum(float(v) for v in dist.values())
            if (set(dist) - set(symptoms[s].states) or abs(total - 1.0) > 1e-6
                    or any(float(v) < 0.0 for v in dist.values())):
                raise FitError(f"{where}: evidence for {s!r} is not a distribution over "
                               f"{list(symptoms[s].states)}: {dict(dist)}")


#: label -> symptom -> state -> summed probability, and label -> number of runs.
_Sums = dict[str, dict[str, dict[str, float]]]
#: A run as the share temperature is chosen on it: the observation, its uncalibrated marginals,
#: its causes' single-fault log-odds, the loss symptoms' distributions with no cause, its
#: uncalibrated P(at least one cause present) and the symptoms many runs cannot show
#: (`CausalNetwork.often_unreadable`).
_Judged = tuple[Observation, Mapping[str, float], Mapping[str, float],
                Mapping[str, Mapping[str, float]], float, frozenset[str]]


def _sums(observations: Iterable[Observation], states: Mapping[str, Sequence[str]]
          ) -> tuple[_Sums, dict[str, int]]:
    """Per label, every symptom's summed distribution (the expected state counts) and the
    number of runs."""
    sums: _Sums = {}
    runs: dict[str, int] = {}
    for ob in observations:
        per = sums.setdefault(ob.cause, {})
        runs[ob.cause] = runs.get(ob.cause, 0) + 1
        for s, dist in ob.evidence.items():
            if s not in states:
                continue
            acc = per.setdefault(s, dict.fromkeys(states[s], 0.0))
            for st in states[s]:
                acc[st] += float(dist.get(st, 0.0))
    return sums, runs


def _tables(summed: tuple[_Sums, dict[str, int]], registry: Registry, ess: float
            ) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, dict[str, float]]]:
    """The Dirichlet posterior means `(ess * hand-set + counts) / (ess + n)` of every cause's
    likelihood columns and every raised symptom's leak (module docstring)."""
    sums, runs = summed
    causes, symptoms = registry.causes(), registry.symptoms()
    states = {s: tuple(sym.states) for s, sym in symptoms.items()}
    leaks_hand = {s: sym.leak_distribution() for s, sym in symptoms.items()}

    def column(prior: Mapping[str, float], label: str, s: str) -> dict[str, float]:
        counts = sums.get(label, {}).get(s, {})
        n = runs.get(label, 0)
        return {st: (ess * float(prior.get(st, 0.0)) + counts.get(st, 0.0)) / (ess + n)
                for st in states[s]}

    healthy = runs.get(HEALTHY, 0) > 0
    likelihoods: dict[str, dict[str, dict[str, float]]] = {}
    leaks: dict[str, dict[str, float]] = {s: dict(d) for s, d in leaks_hand.items()}
    for name, cause in causes.items():
        likelihoods[name] = {s: column(cause.likelihoods[s], name, s) for s in cause.likelihoods}
        if healthy:
            for s in cause.likelihoods:
                leaks[s] = floored(column(leaks_hand[s], HEALTHY, s),
                                   symptoms[s].fitted_leak_floor)
    return likelihoods, leaks


def floored(dist: Mapping[str, float], floor: Mapping[str, float]) -> dict[str, float]:
    """`dist` with each state of `floor` raised to at least its floor, the other states
    scaled down to make room (`Symptom.fitted_leak_floor`)."""
    raised = {st: max(p, floor[st]) for st, p in dist.items() if st in floor}
    if all(raised[st] == dist[st] for st in raised):
        return dict(dist)
    rest = math.fsum(p for st, p in dist.items() if st not in floor)
    room = 1.0 - math.fsum(raised.values())
    if rest <= 0.0:  # nothing outside the floored states: each keeps its floor, and shares
        spare = 1.0 - math.fsum(floor.values())  # the rest as `dist` shares all of it
        return {st: floor[st] + spare * p if st in floor else 0.0 for st, p in dist.items()}
    return {st: raised[st] if st in raised else p * room / rest for st, p in dist.items()}


#: EM rounds at most, and the change in a column under which it has converged.
EM_ROUNDS, EM_TOLERANCE = 500, 1e-12


def _hand_column(registry: Registry, label: str, symptom: str) -> Mapping[str, float] | None:
    """The hand-set column a label's runs observe for `symptom` (a cause's likelihoods, the
    leak for healthy runs), or None when the label's cause does not raise it."""
    if label == HEALTHY:
        return registry.symptoms()[symptom].leak_distribution()
    cause = registry.causes().get(label)
    return None if cause is None else cause.likelihoods.get(symptom)


def _imputed(observations: Sequence[Observation], registry: Registry, ess: float
             ) -> list[Observation]:
    """`observations` with each symptom's evidence replaced by the state's posterior under its
    label's fitted column (EM: the column is the Dirichlet posterior mean of these posteriors,
    iterated to its fixed point; module docstring). Evidence is a likelihood over the states
    (what the symptom could read), not a distribution over them: a signal the run could not
    read (every state alike) adds its label's own column, so it moves no table, where counting
    it as a uniform distribution would pull every column toward uniform. A hard observation
    is unchanged."""
    import numpy as np

    states = {s: tuple(sym.states) for s, sym in registry.symptoms().items()}
    by_label: dict[str, list[int]] = {}
    for i, ob in enumerate(observations):
        by_label.setdefault(ob.cause, []).append(i)
    evidence = [dict(ob.evidence) for ob in observations]
    for label, rows in by_label.items():
        for s, names in states.items():
            hand = _hand_column(registry, label, s)
            if hand is None or any(s not in observations[i].evidence for i in rows):
                continue
            prior = np.array([ess * float(hand.get(st, 0.0)) for st in names])
            lik = np.array([[float(observations[i].evidence[s].get(st, 0.0)) for st in names]
                            for i in rows])
            if (lik.max(axis=1) >= 1.0 - 1e-12).all() and (lik.sum(axis=1) <= 1.0 + 1e-12).all():
                continue  # every observation certain: nothing to impute
            column = (prior + lik.sum(axis=0)) / (ess + len(rows))
            for _ in range(EM_ROUNDS):
                post = _posterior_rows(lik, column)
                new = (prior + post.sum(axis=0)) / (ess + len(rows))
                done = float(np.abs(new - column).max()) < EM_TOLERANCE
                column = new
                if done:
                    break
            for i, row in zip(rows, _posterior_rows(lik, column), strict=True):
                evidence[i][s] = {st: float(v) for st, v in zip(names, row, strict=True)}
    return [dataclasses.replace(ob, evidence=ev)
            for ob, ev in zip(observations, evidence, strict=True)]


def _posterior_rows(lik: Any, column: Any) -> Any:
    """Each row of likelihoods times `column`, normalised (a row that rules out every state
    the column allows keeps its own shape)."""
    import numpy as np

    joint = lik * column
    total = joint.sum(axis=1, keepdims=True)
    own = lik / np.maximum(lik.sum(axis=1, keepdims=True), 1e-300)
    return np.where(total > 0, joint / np.maximum(total, 1e-300), own)


def fit_tables(observations: Sequence[Observation], registry: Registry,
               ess: float = DEFAULT_ESS) -> tuple[dict[str, dict[str, dict[str, float]]],
                                                  dict[str, dict[str, float]]]:
    """(likelihoods, leaks): the Dirichlet posterior means of every column, soft evidence
    counted by EM (`_imputed`; see the module docstring; `fit_tables_pgmpy` computes the same
    with pgmpy's estimator). Causes with no run keep their hand-set tables, and so do the leaks
    when there is no healthy run."""
    _check_ess(ess)
    states = {s: tuple(sym.states) for s, sym in registry.symptoms().items()}
    return _tables(_sums(_imputed(observations, registry, ess), states), registry, ess)


def _check_ess(ess: float) -> None:
    if not (isinstance(ess, (int, float)) and math.isfinite(ess) and ess > 0.0):
        raise FitError(f"ess {ess!r} must be a positive number (the hand-set tables' weight "
                       "in runs)")


def fit_tables_pgmpy(observations: Sequence[Observation], registry: Registry,
                     ess: float = DEFAULT_ESS
                     ) -> tuple[dict[str, dict[str, dict[str, float]]],
                                dict[str, dict[str, float]]]:
    """`fit_tables` by pgmpy's `DiscreteBayesianEstimator` (prior "dirichlet"), one sub-model
    per cause over weighted rows (`_coupled_rows`): the reference the closed form is tested
    against (it takes about a second per cause, too slow for one fit per family)."""
    _check_ess(ess)
    observations = _imputed(observations, registry, ess)
    np, pd, DBN, Estimator = _pg()
    causes, symptoms = registry.causes(), registry.symptoms()
    states = {s: tuple(sym.states) for s, sym in symptoms.items()}
    leaks_hand = {s: sym.leak_distribution() for s, sym in symptoms.items()}
    healthy = [ob for ob in observations if ob.cause == HEALTHY]
    likelihoods: dict[str, dict[str, dict[str, float]]] = {}
    leaks: dict[str, dict[str, float]] = {s: dict(d) for s, d in leaks_hand.items()}
    for name, cause in causes.items():
        raised = list(cause.likelihoods)
        hand = {s: {st: float(cause.likelihoods[s].get(st, 0.0)) for st in states[s]}
                for s in raised}
        own = [ob for ob in observations if ob.cause == name]
        if not own and not healthy:
            likelihoods[name] = hand
            continue
        rows: list[dict[str, str]] = []
        weights: list[float] = []
        for label, obs in (("present", own), ("absent", healthy)):
            for ob in obs:
                for w, row in _coupled_rows(ob.evidence, raised, states):
                    rows.append({name: label, **row})
                    weights.append(w)
        data = pd.DataFrame(rows, columns=[name, *raised])
        pseudo = {s: np.array([[ess * leaks_hand[s][st], ess * hand[s][st]]
                               for st in states[s]]) for s in raised}
        model = DBN()
        model.add_nodes_from([name, *raised])
        model.add_edges_from([(name, s) for s in raised])
        estimator = Estimator(
            state_names={name: list(_CAUSE_STATES), **{s: list(states[s]) for s in raised}},
            prior_type="dirichlet", pseudo_counts=pseudo)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            model.fit(data, estimator=estimator, sample_weight=np.array(weights))
        fitted: dict[str, dict[str, float]] = {}
        for s in raised:
            cpd = model.get_cpds(s)
            col = {st: float(cpd.get_value(**{s: st, name: "present"})) for st in states[s]}
            fitted[s] = col
            if healthy:
                leaks[s] = floored({st: float(cpd.get_value(**{s: st, name: "absent"}))
                                    for st in states[s]}, symptoms[s].fitted_leak_floor)
        likelihoods[name] = fitted
    return likelihoods, leaks


def cross_fitted(observations: Sequence[Observation], registry: Registry, ess: float
                 ) -> Iterator[tuple[list[Observation], Registry]]:
    """Per training family (sorted): its runs, and `registry` with tables fitted on every
    other family. Scoring a family with them is the situation on a family never seen."""
    _check_ess(ess)
    states = {s: tuple(sym.states) for s, sym in registry.symptoms().items()}
    total = _sums(_imputed(observations, registry, ess), states)
    by_family: dict[str, list[Observation]] = {}
    for ob in observations:
        by_family.setdefault(ob.family, []).append(ob)
    for fam in sorted(by_family):
        mine = by_family[fam]
        # only the columns of the family's own labels change without it: their runs are
        # imputed again without it, every other label's sums are kept
        labels = {ob.cause for ob in mine}
        rest = [ob for ob in observations if ob.cause in labels and ob.family != fam]
        summed = _sums(_imputed(rest, registry, ess), states)
        sums = {label: per for label, per in total[0].items() if label not in labels}
        sums.update(summed[0])
        runs = {label: n for label, n in total[1].items() if label not in labels}
        runs.update(summed[1])
        liks, lks = _tables((sums, runs), registry, ess)
        fold = FittedParameters(liks, lks, states, tuple(registry.causes()), float(ess))
        yield mine, fold.apply(registry)


#: The equivalent sample sizes `select_ess` chooses among.
ESS_CANDIDATES = (1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)


def _true_label_nll(posteriors: Mapping[str, float], label: str) -> float:
    """-log P(the true label): the true cause's posterior, or for a healthy run 1 - the
    largest posterior (no cause present)."""
    if label == HEALTHY:
        q = 1.0 - max(posteriors.values(), default=0.0)
    else:
        q = float(posteriors.get(label, 0.0))
    return -math.log(min(max(q, EPS), 1.0))


def select_ess(observations: Sequence[Observation], registry: Registry,
               candidates: Sequence[float] = ESS_CANDIDATES
               ) -> tuple[float, dict[float, float]]:
    """The equivalent sample size with the lowest leave-one-family-out log-loss of the true
    label (each family scored by tables fitted without it: the situation on a new family), and
    every candidate's loss. Ties go to the larger value (closer to the hand-set tables)."""
    from causal.network import get_network

    if len({ob.family for ob in observations}) < 2:
        raise FitError("choosing ess by cross-validation needs two training families or more; "
                       "pass a number with --ess")
    scores: dict[float, float] = {}
    for ess in candidates:
        total = 0.0
        for mine, fold in cross_fitted(observations, registry, ess):
            net = get_network(fold)
            total += sum(_true_label_nll(net.posteriors_pgmpy(ob.evidence), ob.cause)
                         for ob in mine)
        scores[float(ess)] = total / len(observations)
    best = min(scores, key=lambda e: (round(scores[e], 9), -e))
    return best, scores


def _labelled(observations: Sequence[Observation], registry: Registry
              ) -> tuple[list[float], list[bool]]:
    from causal.network import get_network

    net = get_network(registry)
    tops, right = [], []
    for ob in observations:  # pgmpy's posteriors, which the shipped fit refits from to the bit
        cause, p = top_cause(net.posteriors_pgmpy(ob.evidence))
        tops.append(p)
        right.append(cause == ob.cause)
    return tops, right


def fit_parameters(observations: Sequence[Observation], registry: Registry,
                   ess: float = DEFAULT_ESS, calibration: str = "temperature",
                   seeds: Sequence[int] = ()) -> FittedParameters:
    """Fit the likelihoods, leaks and calibration map of `registry` on `observations`.

    `calibration` is "platt", "temperature" or "none". The calibration data are cross-fitted by
    family (each family scored by tables fitted without it) when there are two families or
    more, in-sample otherwise. Deterministic: the same observations give the same parameters.
    """
    from causal.network import get_network

    get_network(registry)  # validates the registry (raises with its own message)
    causes = registry.causes()
    needed = {s for c in causes.values() for s in c.likelihoods}
    _check_observations(observations, registry, needed)
    observations = sorted(observations, key=lambda ob: (ob.family, ob.scenario, ob.seed))
    likelihoods, leaks = fit_tables(observations, registry, ess)
    base = FittedParameters(
        likelihoods=likelihoods, leaks=leaks,
        symptom_states={s: tuple(sym.states) for s, sym in registry.symptoms().items()},
        causes=tuple(causes), ess=float(ess),
        training_families=tuple(sorted({ob.family for ob in observations})),
        runs={label: sum(ob.cause == label for ob in observations)
              for label in [*causes, HEALTHY]},
        seeds=tuple(sorted(set(seeds))), handset_digest=_digest(registry),
        symptom_signature=symptom_signature(registry))
    if calibration == "none" or not observations:
        return base
    families = base.training_families
    tops: list[float] = []
    right: list[bool] = []
    judged: list[_Judged] = []
    folds = (cross_fitted(observations, registry, ess) if len(families) >= 2
             else [(list(observations), base.apply(registry))])
    for mine, fold in folds:
        t, r = _labelled(mine, fold)
        tops += t
        right += r
        judged += _judged(mine, fold)
    cal = fit_calibration(tops, right, calibration)
    fitted_registry = base.apply(registry)

    def acceptable(t: float) -> bool:
        if len(confident_wrong(judged, cal, t)) > CONFIDENT_WRONG_BOUND * len(judged):
            return False
        made, pairs = missing_signal_pairs(observations, fitted_registry, cal, t)
        return len(made) <= MISSING_SIGNAL_BOUND * pairs

    temperature = select_share_temperature(judged, cal, guard=acceptable)

    def keeps_missing_evidence_wide(t: float) -> bool:
        made, pairs = missing_signal_pairs(observations, fitted_registry, cal, temperature, t)
        return len(made) <= MISSING_SIGNAL_BOUND * pairs

    sharp = select_sharp_temperature(judged, cal, temperature, guard=keeps_missing_evidence_wide)
    return dataclasses.replace(base, calibration=dataclasses.replace(
        cal, share_temperature=temperature, sharp_temperature=sharp))


#: Missing evidence widens: dropping one signal of a run (leaving it unobserved) may make a
#: cause other than the run's own more than CONFIDENT in at most this share of the (run,
#: signal) pairs whose wrong causes were at most CONFIDENT with every signal.
MISSING_SIGNAL_BOUND, CONFIDENT = 0.002, CONFIDENT_ANSWER


#: Confident answers are right: under the chosen root-share temperature, at most this share of
#: the cross-fitted runs may get a wrong first answer (another cause, healthy for a failing run,
#: failing for a healthy one) more confident than CONFIDENT_WRONG.
CONFIDENT_WRONG_BOUND = 0.002


def _verdicts(judged: Iterable[_Judged], cal: Calibration, temperature: float,
              sharp: float | None = None) -> Iterator[tuple[Observation, Verdict]]:
    """Each `judged` run with its `Verdict` as `diagnose` gives it: the marginals through
    `cal`, the root shares tempered by `temperature` (and `sharp`: `causal.verdict.judge`)."""
    from causal.verdict import judge

    for ob, present, log_odds, columns, any_present, unreadable in judged:
        yield ob, judge({c: cal(p) for c, p in present.items()}, log_odds, ob.evidence, columns,
                        temperature, sharp, cal(any_present), unreadable)


def _answer(v: Verdict) -> tuple[str, float]:
    """The first answer `diagnose` reports and its confidence: healthy (1 - P(failing)) when
    P(failing) is under the report threshold, else the cause with the largest root confidence."""
    from causal.verdict import REPORT_THRESHOLD

    if v.failing < REPORT_THRESHOLD or not v.root:
        return HEALTHY, 1.0 - v.failing
    return max(v.root.items(), key=lambda kv: kv[1])


def confident_wrong(judged: Sequence[_Judged], cal: Calibration, temperature: float,
                    sharp: float | None = None) -> list[tuple[Observation, str, float]]:
    """The (run, answer, confidence) of the `judged` runs whose first answer, as `diagnose`
    gives it through `cal`, `temperature` and `sharp`, is wrong and more confident than
    CONFIDENT_WRONG."""
    out = []
    for ob, v in _verdicts(judged, cal, temperature, sharp):
        answer, p = _answer(v)
        if answer != ob.cause and p > CONFIDENT_WRONG:
            out.append((ob, answer, p))
    return out


def answer_ece(judged: Sequence[_Judged], cal: Calibration, temperature: float,
               sharp: float | None = None, bins: int = 15) -> float:
    """Expected calibration error of the first answers (`_answer`) of `judged`: over `bins`
    equal-width bins of their confidence, |share right - mean confidence| weighted by the
    bin's share of the runs: the measure `neuraldbg bench` prints
    (`neuraldbg.suite.scoring.ece`, on bench rows), here on verdicts, as `causal` imports
    nothing from `neuraldbg`."""
    binned: dict[int, list[tuple[bool, float]]] = {}
    for ob, v in _verdicts(judged, cal, temperature, sharp):
        answer, p = _answer(v)
        binned.setdefault(min(int(p * bins), bins - 1), []).append((answer == ob.cause, p))
    n = sum(len(b) for b in binned.values())
    return math.fsum(abs(sum(r for r, _ in b) - math.fsum(p for _, p in b))
                     for b in binned.values()) / n if n else 0.0


def missing_signal_pairs(observations: Sequence[Observation], registry: Registry,
                         cal: Calibration, temperature: float, sharp: float | None = None
                         ) -> tuple[list[tuple[Observation, str, list[str]]], int]:
    """The (run, signal, wrong causes) in which leaving that one signal unobserved makes a
    wrong cause's root confidence (as `diagnose` reports it, through `cal`, `temperature` and
    `sharp`) exceed CONFIDENT, and how many (run, signal) pairs were tried: every signal of the
    runs whose wrong causes were at most CONFIDENT with every signal."""
    from causal.network import get_network
    from causal.verdict import verdict

    net = get_network(registry)
    symptoms = registry.symptoms()

    def mapped(posteriors: Mapping[str, float]) -> dict[str, float]:
        return {c: cal(p) for c, p in posteriors.items()}

    made: list[tuple[Observation, str, list[str]]] = []
    pairs = 0
    for ob in observations:
        full = verdict(net, ob.evidence, mapped, temperature, sharp).root
        if max((p for c, p in full.items() if c != ob.cause), default=0.0) > CONFIDENT:
            continue  # already confidently wrong (or a second cause co-present) with all
        for name in ob.evidence:
            pairs += 1
            root = verdict(net, {**ob.evidence, name: symptoms[name].unobserved()}, mapped,
                           temperature, sharp).root
            wrong = [c for c, p in root.items() if c != ob.cause and p > CONFIDENT]
            if wrong:
                made.append((ob, name, wrong))
    return made, pairs


#: The root-share temperatures `select_share_temperature` chooses among.
SHARE_TEMPERATURES = (1.0, 1.1, 1.2, 1.25, 1.3, 1.35, 1.4, 1.5, 1.75, 2.0, 2.5, 3.0)


def _judged(observations: Sequence[Observation], registry: Registry) -> list[_Judged]:
    """Per observation: its uncalibrated marginals, its causes' single-fault log-odds, the
    loss symptoms' distributions with no cause (`causal.verdict.loss_columns`) and its
    uncalibrated P(at least one cause present), under `registry`."""
    from causal.network import get_network
    from causal.verdict import loss_columns

    net = get_network(registry)
    columns = loss_columns(net)
    return [(ob, net.posteriors(ob.evidence), net.root_log_odds(ob.evidence), columns,
             net.failing(ob.evidence), net.often_unreadable) for ob in observations]


def select_share_temperature(judged: Sequence[_Judged], cal: Calibration,
                             candidates: Sequence[float] = SHARE_TEMPERATURES,
                             guard: Callable[[float], bool] | None = None) -> float:
    """The root-share temperature with the lowest log-loss of the true label over `judged`
    (observation, marginals, single-fault log-odds, the loss symptoms with no cause; cross-fitted by
    family in `fit_parameters`), the marginals through `cal`, each run judged as `diagnose`
    does (`causal.verdict.judge`): a run's root confidence is P(failing) x its tempered share,
    a healthy run's is 1 - P(failing). Ties go to the smaller temperature. With a `guard`, the
    best one it accepts (`fit_parameters`: wrong answers above CONFIDENT_WRONG rare,
    `confident_wrong`, and missing evidence widens, `missing_signal_pairs`), tried in order of
    log-loss; the flattest when it accepts none."""
    if not judged:
        return 1.0
    scores = {float(t): _true_label_log_loss(judged, cal, t) for t in candidates}
    ranked = sorted(scores, key=lambda t: (round(scores[t], 9), t))
    if guard is None:
        return ranked[0]
    return next((t for t in ranked if guard(t)), max(scores))


def _true_label_log_loss(judged: Sequence[_Judged], cal: Calibration, temperature: float,
                         sharp: float | None = None) -> float:
    """Mean -log of the true label's confidence over `judged` (a failing run's root confidence
    in its cause, a healthy run's 1 - P(failing))."""
    total = 0.0
    for ob, v in _verdicts(judged, cal, temperature, sharp):
        q = (1.0 - v.failing) if ob.cause == HEALTHY else v.root.get(ob.cause, 0.0)
        total -= math.log(min(max(q, EPS), 1.0))
    return total / len(judged) if judged else 0.0


def select_sharp_temperature(judged: Sequence[_Judged], cal: Calibration, temperature: float,
                             candidates: Sequence[float] = SHARE_TEMPERATURES,
                             guard: Callable[[float], bool] | None = None) -> float | None:
    """The temperature of the root shares below CONFIDENT_WRONG, above which `temperature`
    (the confident-answer one, `select_share_temperature`) still rules (`causal.verdict.
    sharpened`): among the `candidates` below `temperature` whose true-label log-loss over
    `judged` is no worse than `temperature`'s alone, and that the `guard` accepts (missing
    evidence widens), the one whose first answers are best calibrated (`answer_ece`; ties:
    the flatter). None (the same temperature) when none is, so no confident answer is made
    and the log-loss is not paid for a better ECE."""
    if not judged:
        return None
    ceiling = _true_label_log_loss(judged, cal, temperature)
    kept = [float(t) for t in candidates if t < temperature
            and _true_label_log_loss(judged, cal, temperature, t) <= ceiling + 1e-12]
    ranked = sorted(kept, key=lambda t: (round(answer_ece(judged, cal, temperature, t), 9), -t))
    return next((t for t in ranked if guard is None or guard(t)), None)
