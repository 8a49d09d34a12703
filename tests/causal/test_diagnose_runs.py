"""diagnose() on real monitored runs: torch-free diagnosis of a stored run, a user's own cause
node defined entirely in this file, and the demo."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import torch
from torch import nn

from causal.causes.base import CauseNode
from causal.diagnose import REPORT_THRESHOLD, builtin_registry, diagnose, is_healthy
from causal.hypothesis import Localization
from causal.registry import Registry
from causal.run_queries import layer_series
from causal.schema.run import LayerStat, Run
from causal.symptoms.base import Symptom
from causal.testing import conformance_problems
from neuraldbg import NeuralDbg

REPO = Path(__file__).resolve().parents[2]
BLOCK_TORCH = """
import sys
class _NoTorch:  # as if torch were not installed
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"{name} is blocked by the test")
sys.meta_path.insert(0, _NoTorch())
"""


def train(model, path, steps=60, poison_at=None, lr=0.05, seed=0):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
    w = torch.randn(8, 1, generator=g)
    with NeuralDbg(model, path=path) as dbg:
        for step in range(steps):
            x = torch.randn(32, 8, generator=g)
            y = x @ w
            if step == poison_at:
                x = x.clone()
                x[0, 0] = float("nan")
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss, target=y)
            opt.step()
    return dbg.run


def mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 1))


def test_diagnose_a_stored_run_where_torch_cannot_be_imported(run_path):
    path = run_path()
    run = train(mlp(), path, poison_at=40)
    assert diagnose(run)[0].cause == "data_outlier"
    code = BLOCK_TORCH + textwrap.dedent(f"""
        from neuraldbg import diagnose, load_run
        import neuraldbg.cli
        hyps = diagnose(load_run({path!r}))
        assert "torch" not in sys.modules
        print("TOP", hyps[0].cause, hyps[0].step)
        neuraldbg.cli.main(["diagnose", {path!r}, "--json"])
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    first, rest = proc.stdout.split("\n", 1)
    assert first == "TOP data_outlier 40"
    doc = json.loads(rest)
    assert doc["hypotheses"][0]["cause"] == "data_outlier"
    assert doc["hypotheses"][0]["confidence"] >= REPORT_THRESHOLD
    assert doc["healthy"] is False
    assert doc["failing"] >= doc["hypotheses"][0]["confidence"]  # the root shares P(failing)


def test_a_healthy_run_has_no_hypothesis_above_the_threshold(run_path):
    run = train(mlp(), run_path(), steps=120, lr=0.01)
    hyps = diagnose(run)
    assert is_healthy(hyps), [(h.cause, round(h.confidence, 3)) for h in hyps]


# ------------------------------------------------------------------ a user's own cause node


class FrozenLayerSymptom(Symptom):
    """A layer with weights that ran but never had a gradient, while others did."""

    name = "never_gets_gradient"
    states = ("none", "frozen")
    description = "a layer with parameters that never received a gradient"
    leak = MappingProxyType({"none": 0.97, "frozen": 0.03})

    def observe(self, run: Run) -> Mapping[str, float]:
        grads = layer_series(run, LayerStat.GRAD_NORM)
        if not grads:
            return {"none": 0.5, "frozen": 0.5}
        frozen = [n.name for n in run.dag.nodes
                  if n.param_count > 0 and n.ran and n.name not in grads]
        return self.hard("frozen" if frozen else "none")


class FrozenLayer(CauseNode):
    """A layer accidentally frozen (requires_grad=False): it never learns."""

    name = "frozen_layer"
    prior = 0.03
    summary = "A layer is frozen"
    likelihoods = MappingProxyType({"never_gets_gradient": {"none": 0.01, "frozen": 0.99}})

    def localize(self, run: Run) -> Localization:
        grads = layer_series(run, LayerStat.GRAD_NORM)
        for name in run.dag.forward_order():
            node = run.dag.node(name)
            if node is not None and node.param_count > 0 and node.ran and name not in grads:
                return Localization(name, run.series.steps[0] if run.series.steps else 0)
        return Localization(None, None)

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        return [f"set requires_grad=True on {loc.layer!r}'s parameters (or pass them to the "
                "optimizer) if it is meant to train"]


def user_registry() -> Registry:
    reg = builtin_registry(Registry())
    reg.register_symptom(FrozenLayerSymptom)
    reg.register_cause(FrozenLayer)
    return reg


def test_a_users_cause_ranks_first_on_a_run_that_has_it(run_path):
    reg = user_registry()
    assert conformance_problems(reg, "frozen_layer") == []
    model = mlp()
    for p in model[2].parameters():
        p.requires_grad_(False)
    run = train(model, run_path(), steps=80, lr=0.01)
    hyps = diagnose(run, registry=reg)
    assert hyps[0].cause == "frozen_layer", [(h.cause, round(h.confidence, 3)) for h in hyps]
    assert hyps[0].layer == "2"
    assert hyps[0].confidence >= REPORT_THRESHOLD
    assert "requires_grad=True on '2'" in hyps[0].fixes[0]


def test_a_users_cause_does_not_fire_on_a_healthy_run(run_path):
    reg = user_registry()
    run = train(mlp(), run_path(), steps=80, lr=0.01)
    hyps = diagnose(run, registry=reg)
    assert is_healthy(hyps), [(h.cause, round(h.confidence, 3)) for h in hyps]
    assert all(h.cause != "frozen_layer" or h.confidence < 0.1 for h in hyps)


def test_demo_run_is_diagnosed_as_a_learning_rate_problem(run_path):
    from neuraldbg.suite.demo import run_demo

    run = run_demo(path=run_path())
    hyps = diagnose(run)
    assert run.first_nonfinite is not None
    assert hyps[0].cause == "lr_too_high"
    assert any("lr is 0.03 on param group 0" in f for f in hyps[0].fixes)


def test_a_zero_layer_that_no_gradient_reaches_is_stuck_a_zero_head_is_a_design(tmp_path):
    """Two zero-initialised layers in series: the first one's gradient is what flows back into
    it (through the second's zero weights) times what it reads, zero, so it never moves (the
    second's bias does: its gradient norm is not zero); the weights read as far too small and
    the bad init is placed at the first of them. A zero-initialised head
    reading ordinary features receives a gradient and learns: no evidence either way."""
    from causal.causes.bad_init import BadInit
    from causal.run_queries import stuck_at_zero
    from causal.symptoms.layers import WeightScale

    def zeroed(*layers: int) -> nn.Module:
        model = mlp()
        for i in layers:
            nn.init.zeros_(model[i].weight)
            nn.init.zeros_(model[i].bias)
        return model

    stuck = train(zeroed(2, 4), str(tmp_path / "stuck.ndbg"))
    assert stuck_at_zero(stuck) == ["2"]
    assert WeightScale().evidence(stuck)["small"] == 1.0
    assert BadInit().localize(stuck).layer == "2"
    head = train(zeroed(4), str(tmp_path / "head.ndbg"))
    assert stuck_at_zero(head) == []
    assert WeightScale().evidence(head)["typical"] == 1.0
