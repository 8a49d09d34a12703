"""Model patterns that change how parameters, outputs or calls look to hooks: weight
parametrizations (weight norm, spectral norm, orthogonal), pruning masks, channels-last
convolutions, user hooks that replace inputs and outputs, fake quantisation, and a MAML-style
inner step through `torch.func.functional_call`. Under the monitor each trains bit-identically,
without an internal error, with a gradient norm for every module that owns parameters."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator

import networkx as nx
import pytest
import torch
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch import nn
from torch.nn.utils import parametrizations

from causal.diagnose import diagnose, format_diagnosis, is_healthy
from causal.schema.run import LayerStat
from neuraldbg import NeuralDbg
from neuraldbg.errors import NeuralDbgWarning


def _mlp() -> nn.Sequential:
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 4))


def _weight_norm() -> nn.Module:
    m = _mlp()
    parametrizations.weight_norm(m[0])
    parametrizations.weight_norm(m[2])
    return m


def _spectral_norm() -> nn.Module:
    m = _mlp()
    parametrizations.spectral_norm(m[2])
    return m


def _orthogonal() -> nn.Module:
    m = _mlp()
    parametrizations.orthogonal(m[2])
    return m


def _pruned() -> nn.Module:
    m = _mlp()
    prune.l1_unstructured(m[0], "weight", 0.5)
    prune.l1_unstructured(m[2], "weight", 0.3)
    return m


class _ChannelsLast(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.c2, self.fc = nn.Conv2d(8, 8, 3, padding=1), nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(memory_format=torch.channels_last)
        h = F.relu(self.c2(F.relu(self.bn(self.c1(x)))))
        return self.fc(h.mean((2, 3)))


class _UserHooked(nn.Module):
    """The user's own hooks replace a layer's input and an activation's output."""

    def __init__(self) -> None:
        super().__init__()
        self.m = _mlp()
        self.m[1].register_forward_hook(lambda mod, a, o: o * 0.5)
        self.m[0].register_forward_pre_hook(lambda mod, a: (a[0] * 2,))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.m(x)


class _FakeQuant(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.m = _mlp()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.m(torch.fake_quantize_per_tensor_affine(x, 0.1, 0, -128, 127))


class _MAML(nn.Module):
    """An inner gradient step on the network's own parameters, differentiated through."""

    def __init__(self) -> None:
        super().__init__()
        self.net = _mlp()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        params = dict(self.net.named_parameters())
        inner = torch.func.functional_call(self.net, params, (x,)).pow(2).mean()
        grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)
        fast = {k: v - 0.01 * g for (k, v), g in zip(params.items(), grads, strict=True)}
        return torch.func.functional_call(self.net, fast, (x,))


@contextlib.contextmanager
def _monitoring(*dbgs: NeuralDbg) -> Iterator[list[str]]:
    """Start `dbgs` (none: an unmonitored run); yield the list that their internal-error
    warnings are added to once they are closed (also when the body raises)."""
    internal: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NeuralDbgWarning)
        for dbg in dbgs:
            dbg.start()
        try:
            yield internal
        finally:
            for dbg in dbgs:
                dbg.close()
            internal += [str(w.message) for w in caught
                         if issubclass(w.category, NeuralDbgWarning)]


PATTERNS: dict[str, Callable[[], nn.Module]] = {
    "weight_norm": _weight_norm, "spectral_norm": _spectral_norm, "orthogonal": _orthogonal,
    "pruned": _pruned, "channels_last": _ChannelsLast, "user_hooks": _UserHooked,
    "fake_quant": _FakeQuant, "maml": _MAML,
}


def _train(pattern: str, path: str | None) -> tuple[nn.Module, NeuralDbg | None, list[str]]:
    torch.manual_seed(0)
    model = PATTERNS[pattern]()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    shape = (8, 3, 8, 8) if pattern == "channels_last" else (8, 16)
    dbg = NeuralDbg(model, path=path) if path is not None else None
    with _monitoring(*[d for d in (dbg,) if d is not None]) as internal:
        for _ in range(12):
            x = torch.randn(shape, generator=g)
            y = torch.randint(0, 4, (8,), generator=g)
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            if dbg is not None:
                dbg.record_loss(loss)
            opt.step()
    return model, dbg, internal


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_the_monitor_handles_a_model_pattern(pattern, run_path):
    plain, _, _ = _train(pattern, None)
    model, dbg, internal = _train(pattern, run_path())
    assert dbg is not None and not internal, internal
    ref = plain.state_dict()
    for k, v in model.state_dict().items():
        assert torch.equal(v, ref[k]), k
    run = dbg.run
    assert nx.is_directed_acyclic_graph(run.dag.to_networkx())
    window = run.windows[-1]
    seen = {layer for layer in window.layers if window.series(layer, LayerStat.GRAD_NORM)}
    owners = {name for name, m in model.named_modules()
              if any(p.requires_grad for p in m.parameters(recurse=False))}
    assert owners and owners <= seen, sorted(owners - seen)
    hyps = diagnose(run)
    assert is_healthy(hyps), format_diagnosis(run, hyps)


def _gan(paths: tuple[str, str] | None) -> tuple[list[torch.Tensor], list[NeuralDbg], list[str]]:
    """A GAN whose generator and discriminator each have their own monitor (or none); the
    discriminator runs three times a step, once inside the generator's step."""
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    disc = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    opt_g = torch.optim.Adam(gen.parameters(), 1e-3)
    opt_d = torch.optim.Adam(disc.parameters(), 1e-3)
    g = torch.Generator().manual_seed(1)
    ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)
    dbgs = [NeuralDbg(gen, path=paths[0]), NeuralDbg(disc, path=paths[1])] if paths else []
    with _monitoring(*dbgs) as internal:
        for _ in range(30):
            real = torch.randn(16, 2, generator=g) + 3
            z = torch.randn(16, 4, generator=g)
            opt_d.zero_grad()
            loss_d = F.binary_cross_entropy_with_logits(disc(real), ones) + \
                F.binary_cross_entropy_with_logits(disc(gen(z).detach()), zeros)
            loss_d.backward()
            opt_d.step()
            opt_g.zero_grad()
            loss_g = F.binary_cross_entropy_with_logits(disc(gen(z)), ones)
            loss_g.backward()
            opt_g.step()
            for dbg, loss in zip(dbgs, (loss_g, loss_d), strict=False):
                dbg.record_loss(loss)
    return [*gen.state_dict().values(), *disc.state_dict().values()], dbgs, internal


def test_two_monitors_on_the_two_models_of_a_gan(run_path):
    """Each monitor ends its steps on its own model's optimizer: 30 steps each, training
    bit-identical, both runs healthy."""
    plain, _, _ = _gan(None)
    weights, dbgs, internal = _gan((run_path("gen"), run_path("disc")))
    assert not internal, internal
    assert all(torch.equal(a, b) for a, b in zip(weights, plain, strict=True))
    for dbg in dbgs:
        assert len(dbg.run.series.get("loss")) == 30
        assert is_healthy(diagnose(dbg.run))


# torch's own compile stack imports a deprecated torch.jit helper
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_a_compiled_model(run_path):
    """`torch.compile(model)` under the monitor: training bit-identical, every layer in the DAG
    with its gradient norm under its own name, no internal error."""

    def train(path: str | None) -> tuple[nn.Module, NeuralDbg | None, list[str]]:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
        compiled = torch.compile(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        g = torch.Generator().manual_seed(1)
        dbg = NeuralDbg(compiled, path=path) if path is not None else None
        with _monitoring(*[d for d in (dbg,) if d is not None]) as internal:
            for _ in range(12):
                opt.zero_grad()
                loss = compiled(torch.randn(16, 8, generator=g)).pow(2).mean()
                loss.backward()
                if dbg is not None:
                    dbg.record_loss(loss)
                opt.step()
        return model, dbg, internal

    plain, _, _ = train(None)
    model, dbg, internal = train(run_path())
    assert dbg is not None and not internal, internal
    for k, v in model.state_dict().items():
        assert torch.equal(v, plain.state_dict()[k]), k
    run = dbg.run
    assert len(run.series.get("loss")) == 12
    names = {n.name for n in run.dag.nodes}
    window = run.windows[-1]
    seen = {layer for layer in window.layers if window.series(layer, LayerStat.GRAD_NORM)}
    # the layers keep the names they have in the model compile wrapped ("0", not "_orig_mod.0")
    assert {"0", "2"} <= names and {"0", "2"} <= seen, (names, seen)
    assert not any(n.startswith("_orig_mod") for n in names | seen)
