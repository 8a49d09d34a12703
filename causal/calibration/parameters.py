"""The fitted parameters of the network: the versioned record `neuraldbg fit` writes, and the
copy that ships with the package (`causal/calibration/fitted.json`), which `diagnose` uses.

A `FittedParameters` holds fitted likelihoods (cause -> symptom -> state -> p), fitted leaks and
a calibration map, with what they were fitted for. `apply` gives a registry copy that uses them;
`calibrate` maps posteriors. `shipped_for(registry)` is what `diagnose` calls: the shipped
parameters applied to the registry, or the hand-set tables (with a warning saying why) when the
file is missing, unreadable or was fitted for other causes, symptoms or hand-set tables (edit a
cause's likelihoods and the shipped fit is stale until `neuraldbg fit` is re-run).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
import os
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from causal.errors import FitError
from causal.registry import Registry

#: The version of the JSON written by `FittedParameters.to_json`; bumped on incompatible changes.
SCHEMA_VERSION = 1
FORMAT = "neuraldbg-fitted-parameters"
#: Posteriors are clipped to [EPS, 1 - EPS] before taking logits.
EPS = 1e-12
#: Where `neuraldbg fit` writes the parameters that ship with the package by default.
SHIPPED_PATH = Path(__file__).resolve().parent / "fitted.json"





@dataclasses.dataclass(frozen=True)
class Calibration:
    """`p' = sigmoid(a * logit(p) + b)` on every cause's posterior; identity by default.

    `share_temperature` tempers the root shares (`causal.verdict`): each cause's share is taken
    to the power 1 / T and renormalised. The network multiplies the likelihood ratios of
    symptoms that are not independent (a too high lr raises the update ratios, the loss and the
    gradients together), so its shares are sharper than the evidence; T > 1 undoes part of that.
    Fitted by `neuraldbg fit` on the leave-one-family-out log-loss of the true label, under
    bounds on confident wrong answers. `sharp_temperature` (None: the same) tempers the shares
    of the answers below `causal.verdict.CONFIDENT_WRONG` (`causal.verdict.sharpened`): the
    bounds are about confident answers, and one flat temperature made every other answer
    under-confident too."""

    method: str = "identity"
    a: float = 1.0
    b: float = 0.0
    runs: int = 0
    log_loss_before: float | None = None
    log_loss_after: float | None = None
    share_temperature: float = 1.0
    sharp_temperature: float | None = None

    def __call__(self, p: float) -> float:
        if self.a == 1.0 and self.b == 0.0:
            return float(p)
        return _sigmoid(self.a * _logit(p) + self.b)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "a": self.a, "b": self.b, "runs": self.runs,
                "log_loss_before": self.log_loss_before, "log_loss_after": self.log_loss_after,
                "share_temperature": self.share_temperature,
                "sharp_temperature": self.sharp_temperature}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        def opt(key: str) -> float | None:
            return None if data.get(key) is None else float(data[key])

        temperature = float(data.get("share_temperature", 1.0))
        sharp = opt("sharp_temperature")  # absent in records written before it: the same
        for name, t in (("share_temperature", temperature), ("sharp_temperature", sharp)):
            if t is not None and not (math.isfinite(t) and t > 0):
                raise ValueError(f"{name} must be a positive number, not {t}")
        return cls(str(data["method"]), float(data["a"]), float(data["b"]),
                   int(data.get("runs", 0)), opt("log_loss_before"), opt("log_loss_after"),
                   temperature, sharp)


def _logit(p: float) -> float:
    p = min(max(float(p), EPS), 1.0 - EPS)
    return math.log(p) - math.log1p(-p)


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)



def _digest(registry: Registry, causes: Iterable[str] | None = None,
            symptoms: Iterable[str] | None = None) -> str:
    """A short hash of the registry's hand-set tables (priors, likelihoods, leaks, states), over
    the named causes and symptoms (default: all of them)."""
    reg_causes, reg_symptoms = registry.causes(), registry.symptoms()
    cause_names = sorted(reg_causes if causes is None else causes)
    symptom_names = sorted(reg_symptoms if symptoms is None else symptoms)
    data = {
        "causes": {n: {"prior": getattr(reg_causes[n], "prior", None),
                       "likelihoods": {s: dict(d) for s, d in reg_causes[n].likelihoods.items()}}
                   for n in cause_names if n in reg_causes},
        "symptoms": {n: {"states": list(reg_symptoms[n].states),
                         "leak": reg_symptoms[n].leak_distribution()}
                     for n in symptom_names if n in reg_symptoms},
    }
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


Table = Mapping[str, Mapping[str, float]]


@dataclasses.dataclass(frozen=True)
class FittedParameters:
    """Fitted likelihoods (cause -> symptom -> state -> p), leaks (symptom -> state -> p) and a
    calibration map, with what they were fitted for (causes, symptoms and their states, the
    hand-set tables' digest), how (ess, training families, seeds, runs per label)."""

    likelihoods: Mapping[str, Table]
    leaks: Table
    symptom_states: Mapping[str, tuple[str, ...]]
    causes: tuple[str, ...]
    ess: float
    calibration: Calibration = dataclasses.field(default_factory=Calibration)
    training_families: tuple[str, ...] = ()
    runs: Mapping[str, int] = dataclasses.field(default_factory=dict)
    seeds: tuple[int, ...] = ()
    handset_digest: str = ""
    symptom_signature: str = ""
    schema: int = SCHEMA_VERSION

    # ---- persistence

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "schema": self.schema, "ess": self.ess,
            "causes": list(self.causes),
            "symptoms": {s: list(st) for s, st in self.symptom_states.items()},
            "handset_digest": self.handset_digest,
            "symptom_signature": self.symptom_signature,
            "training_families": list(self.training_families), "seeds": list(self.seeds),
            "runs": dict(self.runs),
            "likelihoods": {c: {s: dict(d) for s, d in t.items()}
                            for c, t in self.likelihoods.items()},
            "leaks": {s: dict(d) for s, d in self.leaks.items()},
            "calibration": self.calibration.to_dict(),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FittedParameters:
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise FitError(f"not a neuraldbg fitted-parameters record (expected \"format\": "
                           f"{FORMAT!r}); write one with `neuraldbg fit`")
        if data.get("schema") != SCHEMA_VERSION:
            raise FitError(f"fitted parameters have schema {data.get('schema')!r}, this version "
                           f"of neuraldbg reads schema {SCHEMA_VERSION}; re-run `neuraldbg fit`")
        try:
            return cls(
                likelihoods={str(c): {str(s): {str(k): float(v) for k, v in d.items()}
                                      for s, d in t.items()}
                             for c, t in data["likelihoods"].items()},
                leaks={str(s): {str(k): float(v) for k, v in d.items()}
                       for s, d in data["leaks"].items()},
                symptom_states={str(s): tuple(str(x) for x in st)
                                for s, st in data["symptoms"].items()},
                causes=tuple(str(c) for c in data["causes"]),
                ess=float(data["ess"]),
                calibration=Calibration.from_dict(data["calibration"]),
                training_families=tuple(str(f) for f in data.get("training_families", ())),
                runs={str(k): int(v) for k, v in data.get("runs", {}).items()},
                seeds=tuple(int(s) for s in data.get("seeds", ())),
                handset_digest=str(data.get("handset_digest", "")),
                symptom_signature=str(data.get("symptom_signature", "")),
                schema=int(data["schema"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise FitError(f"malformed fitted-parameters record: {type(e).__name__}: {e}; "
                           "re-run `neuraldbg fit`") from e

    @classmethod
    def from_json(cls, text: str) -> FittedParameters:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise FitError(f"fitted parameters are not valid JSON: {e}") from e
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> FittedParameters:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise FitError(f"cannot read fitted parameters {path}: {e}") from e
        return cls.from_json(text)

    def save(self, path: str | os.PathLike[str]) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.to_json(), encoding="utf-8")

    # ---- use

    def problems(self, registry: Registry, strict: bool = True) -> list[str]:
        """Why these parameters do not fit `registry` (empty: they do).

        Always: every fitted cause and symptom must be registered, with the same states and,
        per cause, the same symptoms. `strict` also forbids registered causes and symptoms that
        were not fitted (`strict=False` lets them keep their hand-set tables)."""
        out = []
        causes, symptoms = registry.causes(), registry.symptoms()
        for name in self.causes:
            if name not in causes:
                out.append(f"fitted cause {name!r} is not registered")
            elif set(causes[name].likelihoods) != set(self.likelihoods.get(name, {})):
                out.append(f"cause {name!r} raises symptoms {sorted(causes[name].likelihoods)}, "
                           f"fitted for {sorted(self.likelihoods.get(name, {}))}")
        for name, states in self.symptom_states.items():
            if name not in symptoms:
                out.append(f"fitted symptom {name!r} is not registered")
            elif tuple(symptoms[name].states) != tuple(states):
                out.append(f"symptom {name!r} has states {list(symptoms[name].states)}, "
                           f"fitted for {list(states)}")
        if strict:
            extra = sorted(set(causes) - set(self.causes))
            if extra:
                out.append(f"registered causes {extra} were not fitted")
            extra = sorted(set(symptoms) - set(self.symptom_states))
            if extra:
                out.append(f"registered symptoms {extra} were not fitted")
        return out

    def is_stale(self, registry: Registry) -> bool:
        """True when `registry`'s hand-set tables differ from the ones these were fitted from."""
        return bool(self.handset_digest) and self.handset_digest != _digest(
            registry, self.causes, self.symptom_states)

    def apply(self, registry: Registry, strict: bool = True) -> Registry:
        """A copy of `registry` whose causes use the fitted likelihoods and whose symptoms use
        the fitted leaks. The registry, its cause and symptom instances and their classes are
        left untouched: the copy holds shallow copies of the instances, with `likelihoods` and
        `leak` set as instance attributes (which the network reads in place of the class ones).
        Raises `FitError` when the parameters do not fit the registry (see `problems`)."""
        problems = self.problems(registry, strict)
        if problems:
            raise FitError("the fitted parameters do not match the registry: "
                           + "; ".join(problems)
                           + ". Re-run `neuraldbg fit` for this registry (or pass strict=False "
                           "to keep unfitted causes at their hand-set tables)")
        new = registry.copy()
        symptoms = registry.symptoms()
        for name, leak in self.leaks.items():
            sym = copy.copy(symptoms[name])
            vars(sym)["leak"] = MappingProxyType(dict(leak))
            new.register_symptom(sym, replace=True)
        causes = registry.causes()
        for name in self.causes:
            node = copy.copy(causes[name])
            vars(node)["likelihoods"] = MappingProxyType(
                {s: MappingProxyType(dict(d)) for s, d in self.likelihoods[name].items()})
            new.register_cause(node, replace=True)
        return new

    def calibrate(self, posteriors: Mapping[str, float]) -> dict[str, float]:
        """Every cause's posterior through the calibration map (same keys)."""
        return {c: self.calibration(p) for c, p in posteriors.items()}


# ---------------------------------------------------------------- the shipped parameters


@dataclasses.dataclass(frozen=True)
class Effective:
    """What `diagnose` runs with: the registry to build the network from, the map applied to its
    posteriors, and where they came from ("fitted: <path>" or "hand-set: <why>")."""

    registry: Registry
    calibrate: Callable[[Mapping[str, float]], dict[str, float]]
    source: str
    share_temperature: float = 1.0
    sharp_temperature: float | None = None


def _identity(posteriors: Mapping[str, float]) -> dict[str, float]:
    return dict(posteriors)


_SHIPPED: dict[str, FittedParameters | str] = {}
_EFFECTIVE: weakref.WeakKeyDictionary[Registry, dict[tuple[int, str], Effective]] = (
    weakref.WeakKeyDictionary())


def _load_shipped(path: Path) -> FittedParameters | str:
    """The parameters at `path`, or why there are none (read once per path)."""
    key = str(path)
    if key not in _SHIPPED:
        if not path.is_file():
            _SHIPPED[key] = f"no fitted parameters at {path} (run `neuraldbg fit`)"
        else:
            try:
                _SHIPPED[key] = FittedParameters.load(path)
            except FitError as e:
                _SHIPPED[key] = str(e)
    return _SHIPPED[key]


def effective(registry: Registry, parameters: FittedParameters | str | os.PathLike[str] | None
              = "shipped") -> Effective:
    """The registry and calibration `diagnose` uses.

    `parameters`: "shipped" (the package's fitted.json; falls back to the hand-set tables, with
    a warning, when it is missing or does not fit `registry`), None (the hand-set tables), a
    path to a fitted-parameters file, or a `FittedParameters` (these two must fit: `FitError`
    otherwise). Causes the parameters were not fitted for (a user's) keep their hand-set tables.
    Files are read and applied once per registry version."""
    if parameters is None:
        return Effective(registry, _identity, "hand-set: requested")
    if isinstance(parameters, FittedParameters):
        return _applied(registry, parameters, "given", strict=True)
    shipped = parameters == "shipped"
    path = SHIPPED_PATH if shipped else Path(parameters)
    cache = _EFFECTIVE.setdefault(registry, {})
    key = (registry.version, str(path))
    if key not in cache:
        fitted = _load_shipped(path) if shipped else FittedParameters.load(path)
        cache[key] = _applied(registry, fitted, str(path), strict=not shipped)
    return cache[key]


def _applied(registry: Registry, fitted: FittedParameters | str, where: str, strict: bool
             ) -> Effective:
    """`fitted` applied to `registry`; else the hand-set tables and why (or, `strict`, a
    FitError). A string `fitted` says why the shipped file could not be read."""
    if isinstance(fitted, str):  # the shipped file is missing or unreadable: the package is broken
        return _handset(registry, fitted, warn=True)
    problems = fitted.problems(registry, strict=False)
    stale = not problems and fitted.is_stale(registry)
    if stale:
        problems.append("the built-in causes' hand-set tables changed since the fit (re-run "
                        "`neuraldbg fit`)")
    if problems and strict:
        raise FitError(f"fitted parameters {where} do not fit this registry: "
                       + "; ".join(problems) + "; re-run `neuraldbg fit`")
    if problems:  # a custom registry without the built-ins quietly keeps its own tables
        return _handset(registry, "; ".join(problems), warn=stale)
    return Effective(fitted.apply(registry, strict=False), fitted.calibrate, f"fitted: {where}",
                     fitted.calibration.share_temperature, fitted.calibration.sharp_temperature)


def _handset(registry: Registry, why: str, warn: bool) -> Effective:
    if warn:
        warnings.warn(f"neuraldbg: using the hand-set tables: {why}", stacklevel=5)
    return Effective(registry, _identity, f"hand-set: {why}")
