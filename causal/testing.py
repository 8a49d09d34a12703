"""The conformance checks every cause node, built-in or a user's, must pass (one suite over the
registry: `tests/causal/test_registry_conformance.py` runs it on every registered cause)."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from causal.errors import NeuralDbgError
from causal.network import get_network
from causal.registry import Registry
from causal.schema.run import Event, EventKind, Run, State
from causal.schema.run_file import RunWriter, load_run

__all__ = ["conformance_problems"]


def conformance_problems(registry: Registry, cause_name: str) -> list[str]:
    """Every check a registered cause must pass; returns the problems found (empty: conforms).

    Valid declaration and CPDs, `check_model()` passes with it, its posterior rises above its
    prior given its own most likely symptom states, and `localize/describe/fixes` run on an empty
    Run and on a Run read back from a run file.
    """
    causes, symptoms = registry.causes(), registry.symptoms()
    if cause_name not in causes:
        return [f"cause {cause_name!r} is not registered (registered: {sorted(causes)})"]
    cause = causes[cause_name]
    try:
        cause.check(symptoms)
        net = get_network(registry)
        net.model  # noqa: B018 (pgmpy's check_model runs when the model is first built)
    except NeuralDbgError as e:
        return [f"{type(e).__name__}: {e}"]
    problems = []
    evidence = {s: symptoms[s].hard(st) for s, st in cause.most_likely_states(symptoms).items()}
    post = net.posteriors(evidence)[cause_name]
    if not post > cause.prior:
        problems.append(
            f"cause {cause_name!r}: posterior {post:.4g} does not rise above its prior "
            f"{cause.prior:.4g} given its own most likely states {evidence}; make its "
            "likelihoods differ from the symptoms' leak distributions")
    with tempfile.TemporaryDirectory() as tmp:
        writer = RunWriter(Path(tmp) / "conformance.ndbg", meta={"model": "Conformance"})
        writer.add_step(0, {"loss": 1.0})
        writer.add_events([Event(1, "layers.0", EventKind.GRAD, State.GRAD_HEALTHY,
                                 State.GRAD_EXPLODING, 1e9)])
        writer.add_step(1, {"loss": math.inf})
        writer.close(status="failed")
        runs = {"an empty Run()": Run(), "a Run read from a run file": load_run(writer.path)}
    for what, run in runs.items():
        try:
            h = cause.hypothesis(run, 0.5)
            if not isinstance(h.description, str) or not h.description:
                problems.append(f"cause {cause_name!r}: describe() on {what} gave no text")
            if not all(isinstance(f, str) for f in h.fixes):
                problems.append(f"cause {cause_name!r}: fixes() on {what} must return strings")
        except Exception as e:
            problems.append(
                f"cause {cause_name!r}: localize/describe/fixes failed on {what}: "
                f"{type(e).__name__}: {e}; handle runs that lack the events you look for")
    return problems
