"""Layer DAG: torch.fx tracing, the autograd/provenance fallback, call sites and merging."""

from __future__ import annotations

import itertools
from typing import Any

import networkx as nx
import pytest
import torch
from torch import nn

from causal.schema.run import LayerGraph
from neuraldbg.capture.watched_units import find_units
from neuraldbg.graph.builders import (
    DagTraceError,
    ForwardGraphRecorder,
    build_dag,
    dag_with_updates,
    trace_fx,
)

torch.set_num_threads(1)


def record(model: nn.Module, *args: Any, previous: LayerGraph | None = None) -> LayerGraph:
    """The autograd graph of one forward pass, fed by temporary hooks (as the monitor does)."""
    units = find_units(model)
    rec = ForwardGraphRecorder(units)
    handles = [
        u.module.register_forward_hook(lambda m, a, o, n=u.name: rec.record(n, a, o)) for u in units
    ]
    try:
        model(*args)
    finally:
        for h in handles:
            h.remove()
    return rec.graph(previous)


def fx(model: nn.Module) -> LayerGraph:
    return trace_fx(model, find_units(model))


def edges(g: LayerGraph) -> set[tuple[str, str]]:
    return set(g.edges)


def node(g: LayerGraph, name: str) -> Any:
    n = g.node(name)
    assert n is not None, name
    return n


def check_dag(g: LayerGraph, model: nn.Module) -> None:
    """Invariants shared by every graph: acyclic, one node per unit, depths are longest paths."""
    nxg = g.to_networkx()
    assert nx.is_directed_acyclic_graph(nxg)
    names = [n.name for n in g.nodes]
    assert len(names) == len(set(names))
    assert {n.module for n in g.nodes} >= {u.name for u in find_units(model)}
    for n in g.nodes:
        preds = g.predecessors(n.name)
        assert n.depth == max((node(g, p).depth + 1 for p in preds), default=0)
        assert (n.order >= 0) == n.ran
    assert list(g.edges) == sorted(
        set(g.edges), key=lambda e: (names.index(e[0]), names.index(e[1]))
    )


def chain(*names: str) -> set[tuple[str, str]]:
    return set(itertools.pairwise(names))


# ---------------------------------------------------------------- simple models, both methods


def test_mlp_chain() -> None:
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2))
    x = torch.randn(3, 4)
    for g in (fx(model), record(model, x), build_dag(model, x)):
        check_dag(g, model)
        assert edges(g) == chain("0", "1", "2", "3", "4")
        assert [(n.name, n.depth, n.order) for n in g.nodes] == [(str(i), i, i) for i in range(5)]
        assert node(g, "1").activation_kind == "saturating"
        assert node(g, "2").module_type == "Linear"
        assert node(g, "2").param_count == 72
    assert fx(model).method == "fx"
    assert build_dag(model, x).method == "fx"
    assert record(model, x).method == "autograd"


def test_cnn_chain() -> None:
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 3),
    )
    x = torch.randn(2, 1, 8, 8)
    for g in (fx(model), record(model, x)):
        check_dag(g, model)
        assert edges(g) == chain("0", "1", "2", "3", "4", "5")
        assert node(g, "2").activation_kind == "relu"
        assert node(g, "5").depth == 5


class Residual(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.f = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
        self.out = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        y = h + self.f(h)
        return self.out(torch.tanh(y))


def test_residual_skip_and_branch_edges() -> None:
    model = Residual()
    x = torch.randn(3, 4)
    for g in (fx(model), record(model, x)):
        check_dag(g, model)
        assert edges(g) == chain("inp", "f.0", "f.1", "f.2", "out") | {("inp", "out")}
        assert node(g, "out").depth == 4


class GRUNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Linear(3, 6)
        self.gru = nn.GRU(6, 8, batch_first=True)
        self.fc = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(self.emb(x))
        return self.fc(out[:, -1])


def test_gru_tuple_output() -> None:
    model = GRUNet()
    x = torch.randn(2, 5, 3)
    for g in (fx(model), record(model, x)):
        check_dag(g, model)
        assert edges(g) == chain("emb", "gru", "fc")
        assert node(g, "gru").module_type == "GRU"


class Scaled(nn.Module):
    """A root that owns a parameter directly, so it is a unit named ""."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * self.scale


def test_root_unit() -> None:
    model = Scaled()
    x = torch.randn(2, 4)
    for g in (fx(model), record(model, x)):
        check_dag(g, model)
        assert edges(g) == {("fc", "")}
        assert node(g, "").param_count == 4 and node(g, "").ran


# ---------------------------------------------------------------- fx failure and fallback


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.a(x) if x.sum() > 0 else self.b(x)
        return self.head(h)


def test_control_flow_falls_back_to_autograd() -> None:
    model = Branchy()
    with pytest.raises(DagTraceError, match="control flow"):
        fx(model)
    x = torch.ones(2, 4)
    g = build_dag(model, x)
    check_dag(g, model)
    assert g.method == "autograd"
    assert len(g.notes) == 1 and g.notes[0].startswith("fx trace failed (TraceError)")
    assert "\n" not in g.notes[0]
    assert edges(g) == {("a", "head")}
    assert node(g, "a").ran and node(g, "head").ran
    b = node(g, "b")
    assert (b.ran, b.order, b.depth) == (False, -1, 0)
    assert [n.name for n in g.nodes] == ["a", "head", "b"]

    # A second pass takes the other branch; merging shows both paths.
    merged = record(model, -x, previous=g)
    check_dag(merged, model)
    assert merged.method == "autograd"
    assert edges(merged) == {("a", "head"), ("b", "head")}
    assert all(n.ran for n in merged.nodes)
    assert merged.forward_order()[-1] == "head"
    assert merged.notes == g.notes
    placeholder = LayerGraph(method="none", notes=("fx failed: x",))
    assert record(model, x, previous=placeholder).notes == ("fx failed: x",)


def test_merging_passes_stays_acyclic() -> None:
    class Swap(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.p = nn.Linear(2, 2)
            self.q = nn.Linear(2, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.q(self.p(x)) if x.sum() > 0 else self.p(self.q(x))

    model = Swap()
    x = torch.ones(1, 2)
    first = record(model, x)
    assert edges(first) == {("p", "q")}
    merged = record(model, -x, previous=first)
    check_dag(merged, model)
    assert edges(merged) == {("p", "q")}
    assert any("cycle" in note for note in merged.notes)


def test_transformer_encoder() -> None:
    layer = nn.TransformerEncoderLayer(32, 2, 64, batch_first=True)
    model = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    g = build_dag(model, torch.randn(2, 5, 32))
    check_dag(g, model)
    assert g.method in ("fx", "autograd")
    for i in (0, 1):
        p = f"layers.{i}."
        assert node(g, p + "self_attn").module_type == "MultiheadAttention"
        assert node(g, p + "self_attn").ran
        assert node(g, p + "self_attn").param_count == 32 * 32 * 3 + 32 * 3
        # out_proj's weights are used functionally: never called as a module.
        assert not node(g, p + "self_attn.out_proj").ran
        assert {
            (p + "self_attn", p + "dropout1"),
            (p + "dropout1", p + "norm1"),  # attention branch of the residual
            (p + "norm1", p + "linear1"),
            (p + "linear1", p + "dropout"),
            (p + "dropout", p + "linear2"),
            (p + "linear2", p + "dropout2"),
            (p + "dropout2", p + "norm2"),
            (p + "norm1", p + "norm2"),  # skip around the feed-forward block
        } <= edges(g)
        assert node(g, p + "norm1").module_type == "LayerNorm"
    # The input producer of layer 1 feeds both its attention and (skip) its norm1.
    assert ("layers.0.norm2", "layers.1.self_attn") in edges(g)
    assert set(g.predecessors("layers.1.norm1")) == {"layers.0.norm2", "layers.1.dropout1"}


def test_gpt2_residual_stream() -> None:
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(
        n_layer=2,
        n_embd=32,
        n_head=2,
        vocab_size=100,
        n_positions=32,
        bos_token_id=0,
        eos_token_id=0,
    )
    model = transformers.GPT2LMHeadModel(cfg)
    ids = torch.randint(0, 100, (2, 8))
    with pytest.raises(DagTraceError):
        fx(model)
    g = build_dag(model, ids)
    check_dag(g, model)
    assert g.method == "autograd"
    assert g.notes[0].startswith("fx trace failed")
    preds = set(g.predecessors("transformer.h.1.ln_1"))
    assert "transformer.h.0.mlp.dropout" in preds  # block-0 MLP output
    assert "transformer.h.0.attn.resid_dropout" in preds  # block-0 attention, via the residual
    assert "transformer.drop" in preds  # the embeddings, via the residual stream
    assert {
        ("transformer.wte", "transformer.drop"),
        ("transformer.wpe", "transformer.drop"),
        ("transformer.h.0.ln_1", "transformer.h.0.attn.c_attn"),
        ("transformer.h.0.attn.c_attn", "transformer.h.0.attn.c_proj"),
        ("transformer.h.0.mlp.c_fc", "transformer.h.0.mlp.act"),
        ("transformer.h.1.mlp.dropout", "transformer.ln_f"),
    } <= edges(g)
    assert g.predecessors("lm_head") == ["transformer.ln_f"]
    assert g.forward_order()[:2] == ["transformer.wte", "transformer.wpe"]
    assert node(g, "lm_head").depth == max(n.depth for n in g.nodes)


# ---------------------------------------------------------------- call sites and provenance


class SharedAct(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)
        self.fc3 = nn.Linear(4, 1)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(self.act(self.fc2(self.act(self.fc1(x)))))


def test_shared_activation_call_sites_kept_apart() -> None:
    model = SharedAct()
    x = torch.randn(2, 4)
    for g in (fx(model), record(model, x)):
        check_dag(g, model)
        assert edges(g) == chain("fc1", "act", "fc2", "act#1", "fc3")
        assert node(g, "act").module == "act" and node(g, "act#1").module == "act"
        assert node(g, "act#1").module_type == "ReLU" and node(g, "act#1").ran
        assert [n.name for n in g.nodes] == ["fc1", "act", "fc2", "act#1", "fc3"]
        assert any("act" in note for note in g.notes)


def test_shared_module_merged_when_acyclic() -> None:
    class Parallel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 4)
            self.act = nn.Tanh()
            self.head = nn.Linear(4, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.act(self.a(x)) + self.act(self.b(x)))

    model = Parallel()
    x = torch.randn(2, 4)
    for g in (fx(model), record(model, x)):
        check_dag(g, model)
        assert edges(g) == {("a", "act"), ("b", "act"), ("act", "head")}
        assert not g.notes


@pytest.mark.parametrize(
    "middle", [nn.ReLU(inplace=True), nn.Identity(), nn.Dropout(0.5).eval()], ids=str
)
def test_in_place_and_pass_through(middle: nn.Module) -> None:
    model = nn.Sequential(nn.Linear(4, 4), middle, nn.Linear(4, 2))
    x = torch.randn(3, 4)
    for g in (fx(model), record(model, x)):
        check_dag(g, model)
        assert edges(g) == chain("0", "1", "2")


def test_frozen_first_layer_and_integer_input() -> None:
    class Frozen(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(10, 8)
            self.proj = nn.Linear(8, 8)
            self.head = nn.Linear(8, 2)
            self.emb.requires_grad_(False)
            self.proj.requires_grad_(False)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.head(self.proj(self.emb(ids)))

    model = Frozen()
    ids = torch.randint(0, 10, (2, 5))
    for g in (fx(model), record(model, ids)):
        check_dag(g, model)
        assert edges(g) == chain("emb", "proj", "head")
    g = record(model, ids)
    assert node(g, "emb").param_count == 80  # frozen parameters still count


def test_dict_output_through_functional_op() -> None:
    class DictOut(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.randn(4, 4))

        def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
            return {"h": x @ self.weight, "aux": x.sum(-1)}

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.enc = DictOut()
            self.head = nn.Linear(4, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.enc(x)["h"] * 2)

    model = Model()
    g = record(model, torch.randn(2, 4))
    check_dag(g, model)
    assert edges(g) == {("enc", "head")}


class Skips(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(4, 4)
        self.spare = nn.Linear(4, 4)
        self.last = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.last(self.first(x))


def test_module_never_called() -> None:
    model = Skips()
    for g in (fx(model), record(model, torch.randn(2, 4))):
        check_dag(g, model)
        spare = node(g, "spare")
        assert (spare.ran, spare.order, spare.depth) == (False, -1, 0)
        assert [n.name for n in g.nodes] == ["first", "last", "spare"]
        assert edges(g) == {("first", "last")}


def test_leaf_root_model() -> None:
    model = nn.Linear(3, 2)
    for g in (fx(model), record(model, torch.randn(1, 3))):
        assert [(n.name, n.ran, n.order, n.param_count) for n in g.nodes] == [("", True, 0, 8)]
        assert g.edges == ()


def test_recorder_rejects_unknown_unit() -> None:
    rec = ForwardGraphRecorder(find_units(nn.Linear(2, 2)))
    with pytest.raises(ValueError, match="not a unit"):
        rec.record("nope", (), torch.zeros(1))
    rec.record("", (torch.zeros(1, 2),), torch.zeros(1, 2))
    assert len(rec) == 1
    g = rec.graph()
    assert [(n.name, n.ran) for n in g.nodes] == [("", True)]
    rec.clear()
    assert len(rec) == 0


# ---------------------------------------------------------------- helpers and side effects


def test_dag_with_updates() -> None:
    model = Branchy()
    g = build_dag(model, torch.ones(2, 4))
    updated = dag_with_updates(g, {"b"})
    assert node(updated, "b").ran and node(updated, "b").order == -1
    assert node(updated, "a").ran and updated.edges == g.edges
    assert not node(g, "b").ran  # the original is untouched


class BNBranchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.bn(self.fc(x))
        return self.drop(h) if h.sum() > -1e9 else h


def test_build_dag_leaves_model_and_rng_unchanged() -> None:
    torch.manual_seed(123)
    model = BNBranchy()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = torch.randn(8, 4) * 5 + 3
    rng = torch.get_rng_state()
    g = build_dag(model, x)
    assert g.method == "autograd"
    assert edges(g) == chain("fc", "bn", "drop")
    after = model.state_dict()
    for k, v in before.items():
        assert torch.equal(after[k], v), k
    assert after["bn.num_batches_tracked"].item() == 0
    assert torch.equal(torch.get_rng_state(), rng)
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    build_dag(model, x)
    assert torch.equal(torch.rand(3), expected)  # dropout in the fallback used no user randomness
    assert model.training
    assert all(not m._forward_hooks for m in model.modules())


class _ScaledBlock(nn.Module):
    """A block that owns a parameter itself (a layer-scale / GIN eps) and calls child layers."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp((1 + self.eps) * x)


def test_layers_inside_a_unit_that_owns_parameters_get_their_place_in_the_graph(run_path):
    """fx stops at every unit, so it sees a block that owns a parameter as one call and never
    the layers it calls: once those run, the monitor records the graph from forward passes, in
    which every layer has its place and order (children before the block that returns them)."""
    from neuraldbg import NeuralDbg

    torch.manual_seed(0)
    model = nn.Sequential(_ScaledBlock(8), _ScaledBlock(8), nn.Linear(8, 2))
    hidden = [n.name for n in trace_fx(model, find_units(model)).nodes if n.order < 0]
    assert set(hidden) == {f"{b}.mlp.{i}" for b in "01" for i in range(3)}  # what fx misses
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for _ in range(4):
            opt.zero_grad()
            model(torch.randn(16, 8)).pow(2).mean().backward()
            opt.step()
    g = dbg.run.dag
    check_dag(g, model)
    assert g.method == "autograd"
    assert any("recorded from real forward passes" in note for note in g.notes)
    assert all(n.order >= 0 for n in g.nodes)
    order = g.forward_order()
    assert order.index("0.mlp.0") < order.index("0.mlp.2") < order.index("1.mlp.0") < \
        order.index("1.mlp.2") < order.index("2")
    assert ("0.mlp.2", "1.mlp.0") in edges(g) or ("0", "1.mlp.0") in edges(g)


class _LoRALinear(nn.Module):
    """A frozen base layer and a trainable low-rank update, in the wrapper's own code."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.base = nn.Linear(d, d).requires_grad_(False)
        self.a = nn.Parameter(torch.randn(d, 2) * 0.1)
        self.b = nn.Parameter(torch.zeros(2, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + x @ self.a @ self.b


def test_a_frozen_layer_fed_by_the_input_is_linked_to_the_wrapper_it_runs_inside():
    """The first frozen base layer of a LoRA model has no autograd history (neither it nor the
    input requires grad), so no grad_fn chain leads back to it; it ran inside its wrapper, and
    its output went into the wrapper's, as the later blocks' graph shows through autograd."""
    torch.manual_seed(0)
    model = nn.Sequential(_LoRALinear(8), nn.ReLU(), _LoRALinear(8))
    g = record(model, torch.randn(4, 8))
    assert ("0.base", "0") in edges(g)  # no autograd history: linked by containment
    assert ("2.base", "2") in edges(g)  # through autograd, as before


def test_each_layer_records_the_gain_of_its_weights_at_start() -> None:
    """A node's `weight_gain` is its weight's rms x sqrt(fan_in) when the monitor started: about
    0.58 under PyTorch's default init, sqrt(2) under Kaiming's for ReLU, 0 for a zero-initialised
    layer, None for a layer without weights; the same in a graph built from a forward pass."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(8),
                          nn.Linear(8, 256), nn.Linear(256, 4))
    model(torch.randn(1, 3, 6, 6))  # the lazy layer gets its weights
    nn.init.kaiming_normal_(model[4].weight, nonlinearity="relu")
    nn.init.zeros_(model[5].weight)
    for g in (fx(model), record(model, torch.randn(2, 3, 6, 6))):
        assert node(g, "0").weight_gain == pytest.approx(3 ** -0.5, rel=0.1)
        assert node(g, "3").weight_gain == pytest.approx(3 ** -0.5, rel=0.1)
        assert node(g, "4").weight_gain == pytest.approx(2 ** 0.5, rel=0.25)
        assert node(g, "5").weight_gain == 0.0
        assert node(g, "1").weight_gain is None
    lazy = nn.Sequential(nn.LazyLinear(4))
    assert find_units(lazy)[0].weight_gain is None  # no values yet: no gain, no error
    assert LayerGraph.from_dict(fx(model).to_dict()) == fx(model)


class _CheckpointedResNet(nn.Module):
    """Residual blocks run through `torch.utils.checkpoint` (reentrant: under no_grad in the
    forward pass), a frozen teacher run under no_grad in `forward`, a head reading both."""

    def __init__(self, d: int, reentrant: bool | None) -> None:
        super().__init__()
        self.stem = nn.Linear(d, d)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(d, d), nn.Tanh(), nn.Linear(d, d)) for _ in range(2))
        self.teacher = nn.Linear(d, d).requires_grad_(False)
        self.head = nn.Linear(2 * d, 1)
        self.reentrant = reentrant

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.stem(x)
        if not torch.isfinite(h).all():  # data-dependent control flow: no fx trace
            return h.sum(-1, keepdim=True)
        for block in self.blocks:
            if self.reentrant is None:
                h = h + block(h)
            else:
                h = torch.utils.checkpoint.checkpoint(
                    lambda t, b=block: t + b(t), h, use_reentrant=self.reentrant)
        with torch.no_grad():
            t = self.teacher(x)
        return self.head(torch.cat([h, t], dim=-1))


def _train_graph(model: nn.Module, run_path: Any) -> LayerGraph:
    from neuraldbg import NeuralDbg

    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for _ in range(6):
            opt.zero_grad()
            model(torch.randn(8, 16)).pow(2).mean().backward()
            opt.step()
    return dbg.run.dag


def test_layers_run_without_gradients_are_linked_by_following_the_values(run_path):
    """Reentrant checkpointing runs each block under no_grad and leaves one
    CheckpointFunctionBackward from the block's input to its output, and a frozen teacher run
    under no_grad has no autograd history at all: no grad_fn chain links their layers. Once a
    recorded pass shows a layer run with gradients off, the graph is recorded again with the
    values followed, and it is the graph of the same model run without checkpointing."""
    torch.manual_seed(0)
    plain = _train_graph(_CheckpointedResNet(16, None), run_path)
    assert plain.method == "provenance"  # the teacher runs under no_grad
    for reentrant in (True, False):
        torch.manual_seed(0)
        g = _train_graph(_CheckpointedResNet(16, reentrant), run_path)
        check_dag(g, _CheckpointedResNet(16, reentrant))
        assert g.method == "provenance"
        assert any("the graph follows the values" in note for note in g.notes)
        assert edges(g) == edges(plain)
    assert {("stem", "blocks.0.0"), ("blocks.0.2", "blocks.1.0"), ("stem", "blocks.1.0"),
            ("blocks.1.2", "head"), ("teacher", "head")} <= edges(plain)
    assert ("stem", "head") in edges(plain)  # the residual stream, through the additions


def test_provenance_unions_in_place_updates_and_forgets_freed_tensors() -> None:
    from neuraldbg.graph.provenance import Provenance

    prov = Provenance()
    a, b = torch.ones(3), torch.ones(3)
    prov.tag(a, 0)
    prov.tag(b, 1)
    prov.start()
    try:
        c = a * 2  # a new value carries its arguments' calls
        d = torch.cat([c, b])  # arguments in a list too
        c.add_(b)  # an in-place update: c now holds both
        e = torch.zeros(3)  # no tensor argument: nothing known
    finally:
        prov.stop()
    assert prov.get(e) == frozenset()
    assert prov.get(d) == frozenset()  # stop() forgets every tag
    prov.start()
    try:
        prov.tag(a, 0)
        prov.tag(b, 1)
        c = a * 2
        assert prov.get(c) == {0}
        assert prov.get(torch.cat([c, b])) == {0, 1}
        c.add_(b)
        assert prov.get(c) == {0, 1}
        z = torch.zeros(2, 3)
        z[0] = a  # assignment into a tensor: it holds what it was given
        assert prov.get(z) == {0}
        fresh = torch.ones(3)
        assert prov.get(fresh) == frozenset()  # never tagged (even if its id was reused)
    finally:
        prov.stop()
    assert not torch.overrides._get_current_function_mode_stack()
