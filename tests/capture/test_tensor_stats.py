"""Per-layer statistics: the host-memory fast path equals the general path to the last bit,
and float64 models are measured (torch refuses a narrowing norm dtype there)."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import neuraldbg.capture.tensor_stats as stats
from causal.schema.run import ActivationKind, LayerStat
from neuraldbg import NeuralDbg
from neuraldbg.capture.tensor_stats import LabelPool
from neuraldbg.errors import NeuralDbgWarning

KINDS = {
    "tanh": (nn.Tanh(), ActivationKind.SATURATING, torch.tanh),
    "relu": (nn.ReLU(), ActivationKind.RELU, torch.relu),
    "linear": (nn.Linear(2, 2), ActivationKind.OTHER, lambda t: t),
}


def _general(module: nn.Module, y: torch.Tensor, kind: ActivationKind) -> torch.Tensor:
    """The general path (the one for accelerators), forced."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stats, "_HOST_DTYPES", ())
        return stats.activation_stats(module, y, kind)


@settings(max_examples=80, deadline=None)
@given(rows=st.integers(1, 40), cols=st.integers(1, 40), log_scale=st.integers(-6, 19),
       near_constant=st.booleans(), double=st.booleans(), kind=st.sampled_from(sorted(KINDS)),
       seed=st.integers(0, 2**16))
def test_the_host_path_equals_the_general_path_bit_for_bit(rows, cols, log_scale, near_constant,
                                                            double, kind, seed):
    module, activation_kind, f = KINDS[kind]
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g) * 10.0 ** log_scale
    if near_constant:  # the std is float32 cancellation noise: it must be the same noise
        x = 0.1234567 + 1e-7 * x / 10.0 ** log_scale
    y = f(x.double() if double else x)
    fast = stats.activation_stats(module, y, activation_kind)
    general = _general(module, y, activation_kind)
    same = torch.equal(fast.nan_to_num(nan=-7.0, posinf=7e30), general.nan_to_num(nan=-7.0,
                                                                                  posinf=7e30))
    assert same, (fast.tolist(), general.tolist())


def test_a_non_finite_output_takes_the_general_path_and_is_counted_exactly():
    y = torch.tensor([[1.0, float("inf"), float("nan")], [2.0, 3.0, float("-inf")]])
    row = stats.activation_stats(nn.Linear(2, 2), y, ActivationKind.OTHER)
    cols = dict(zip(stats.ACT_COLUMNS, row.tolist(), strict=False))
    assert cols[LayerStat.ACT_NONFINITE] == 3.0


def test_a_float64_model_is_measured(run_path):
    """Weight gains, input moments, gradient norms and activation statistics of a float64
    model: torch refuses norms with a narrowing float32 dtype there, which stopped the monitor
    at its start."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NeuralDbgWarning)
        with NeuralDbg(model, path=run_path(), preset="full") as dbg:
            for _ in range(5):
                opt.zero_grad()
                loss = model(torch.randn(8, 4, dtype=torch.float64)).pow(2).mean()
                loss.backward()
                dbg.record_loss(loss)
                opt.step()
    assert not [w for w in caught if issubclass(w.category, NeuralDbgWarning)]
    run = dbg.run
    assert len(run.series.get("loss")) == 5
    assert all(n.weight_gain is not None and n.weight_gain > 0
               for n in run.dag.nodes if n.name in ("0", "2"))
    window = run.windows[-1]
    assert {"0", "2"} <= {layer for layer in window.layers
                          if window.series(layer, LayerStat.GRAD_NORM)}
    assert window.series("1", LayerStat.ACT_SATURATED)


def test_the_label_pool_finds_a_large_vocabulary_s_entropy_where_one_batch_cannot():
    """512 tokens drawn uniformly from 50,000: one batch's plug-in entropy is below log(512);
    the pool over 20 batches, coverage-adjusted, is within 0.1 nat of log(50,000)."""
    g = torch.Generator().manual_seed(0)
    pool = LabelPool()
    batches = [torch.randint(0, 50_000, (8, 64), generator=g) for _ in range(20)]
    first = float(pool.add([batches[0]]))
    for y in batches[1:]:
        last = float(pool.add([y]))
    assert first > math.log(512)
    assert last == pytest.approx(math.log(50_000), abs=0.1)


def test_the_label_pool_counts_few_classes_exactly_and_leaves_ignored_labels_out():
    pool = LabelPool()
    pool.add([torch.tensor([0, 1, -100, 1])])
    h = float(pool.add([torch.tensor([0, 1] * 50)]))
    assert h == pytest.approx(math.log(2), abs=1e-3)
    assert pool.classes.tolist() == [0, 1] and pool.counts.tolist() == [51.0, 52.0]
    assert math.isnan(float(LabelPool().add([torch.tensor([-100, -100])])))


def test_the_label_pool_stops_counting_at_its_class_limit(monkeypatch):
    monkeypatch.setattr(LabelPool, "MAX_CLASSES", 3)
    pool = LabelPool()
    pool.add([torch.tensor([0, 1, 2, 3])])
    h = float(pool.add([torch.tensor([4, 5])]))
    assert pool.classes.tolist() == [0, 1, 2, 3] and math.isfinite(h)
