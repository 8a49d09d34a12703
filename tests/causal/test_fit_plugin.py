"""A user's own cause, with scenarios of their own, is fitted and used the same way as the
built-ins: `neuraldbg fit --plugin MODULE --suite DIR --out PATH`, then `diagnose --params PATH`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = '''
from types import MappingProxyType
from causal.causes.base import CauseNode
from causal.hypothesis import Localization
from causal.registry import register_cause, register_symptom
from causal.symptoms.base import Symptom
from causal.run_queries import layer_series
from causal.schema.vocabulary import LayerStat


class NeverGetsGradient(Symptom):
    name = "never_gets_gradient"
    states = ("none", "frozen")
    description = "a layer with parameters that never received a gradient"
    leak = MappingProxyType({"none": 0.97, "frozen": 0.03})

    def observe(self, run):
        grads = layer_series(run, LayerStat.GRAD_NORM)
        frozen = [n.name for n in run.dag.nodes
                  if n.param_count > 0 and n.ran and n.name not in grads]
        return self.hard("frozen" if frozen else "none")


class FrozenLayer(CauseNode):
    """A layer accidentally frozen (requires_grad=False): it never learns."""
    name = "frozen_layer"
    prior = 0.03
    summary = "A layer is frozen"
    likelihoods = MappingProxyType({"never_gets_gradient": {"none": 0.3, "frozen": 0.7}})

    def localize(self, run):
        grads = layer_series(run, LayerStat.GRAD_NORM)
        for name in run.dag.forward_order():
            node = run.dag.node(name)
            if node is not None and node.param_count > 0 and node.ran and name not in grads:
                return Localization(name, 0)
        return Localization(None, None)

    def fixes(self, run, loc):
        return [f"set requires_grad=True on {loc.layer!r}"]


register_symptom(NeverGetsGradient)
register_cause(FrozenLayer)
'''

SCENARIO = '''
import torch
from torch import nn

CAUSE = {cause!r}
ORIGIN = {origin!r}
SOURCE = "tests: a frozen hidden layer"


def build(seed, fixed=False):
    g = torch.Generator().manual_seed(seed + {offset})
    w = torch.randn(4, 1, generator=g)
    batches = [(x, x @ w) for x in (torch.randn(16, 4, generator=g) for _ in range(25))]
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, {width}), nn.Tanh(), nn.Linear({width}, 1))
    if {frozen!r} and not fixed:
        for p in model[0].parameters():
            p.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    return {{"model": model, "optimizer": torch.optim.SGD(params, lr=0.05),
            "loss_fn": nn.MSELoss(), "batches": batches, "steps": 25}}
'''


def _write(directory: Path, name: str, cause: str, frozen: bool, offset: int, width: int) -> None:
    directory.mkdir(exist_ok=True)
    text = SCENARIO.format(cause=cause, origin="0" if frozen else None, frozen=frozen,
                           offset=offset, width=width)
    (directory / f"{name}.py").write_text(textwrap.dedent(text))


@pytest.mark.slow
def test_a_users_cause_is_fitted_and_diagnosed_with_its_fitted_tables(tmp_path):
    (tmp_path / "my_causes.py").write_text(textwrap.dedent(PLUGIN))
    train, held = tmp_path / "train", tmp_path / "held"
    _write(train, "frozen_a", "frozen_layer", True, 0, 8)
    _write(train, "frozen_b", "frozen_layer", True, 100, 12)
    _write(train, "calm_a", "healthy", False, 200, 8)
    _write(held, "frozen_c", "frozen_layer", True, 300, 16)
    out = tmp_path / "mine.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    cmd = [sys.executable, "-c", "import sys; from neuraldbg.cli import main; "
           "sys.exit(main(sys.argv[1:]))"]
    done = subprocess.run([*cmd, "fit", "--plugin", "my_causes", "--suite", str(train),
                           "--held-out", str(held), "--seeds", "0,1", "--out", str(out),
                           "--no-progress"], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    fitted = json.loads(out.read_text())
    assert "frozen_layer" in fitted["causes"] and fitted["runs"]["frozen_layer"] == 4
    # the fitted table moved from the hand-set 0.7 towards what the 4 frozen runs showed
    assert fitted["likelihoods"]["frozen_layer"]["never_gets_gradient"]["frozen"] > 0.7
    assert "held-out families (1)" in done.stdout

    # a run of the held-out family, diagnosed with the user's fitted parameters
    script = textwrap.dedent(f"""
        import my_causes, torch
        torch.set_num_threads(1)
        from neuraldbg.suite.scenario import load_scenario, train
        from causal.diagnose import diagnose
        s = load_scenario({str(held / 'frozen_c.py')!r})
        _, run = train(s.build(2), {str(tmp_path / 'c.ndbg')!r})
        h = diagnose(run, parameters={str(out)!r})[0]
        print(h.cause, h.layer)
    """)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["frozen_layer", "0"]
