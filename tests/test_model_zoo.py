"""The monitor on a zoo of Hugging Face architectures built from tiny configs (random weights,
no download): it records every layer that runs, builds an acyclic layer DAG, never hits an
internal error, and leaves training bit-identical to an unmonitored run.

Each family stresses the capture differently: T5 and BART (encoder-decoder, tied embeddings,
relative position buckets), ALBERT (one layer group called at every depth), Llama (RoPE,
grouped-query attention, RMSNorm), Swin (shifted windows, reshapes between stages), ConvNeXt
(layer-scale parameters held by a container), MobileViT (unfold/fold patches, BatchNorm) and
Mamba (a selective scan whose parameters sit on the mixer itself).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
import torch
from torch import nn

from causal.schema.run import LayerStat
from neuraldbg import NeuralDbg

transformers = pytest.importorskip("transformers")


def _load_zoo() -> Any:
    """`benchmarks/hf_zoo.py` (loaded by path: benchmarks/ is not a package)."""
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "hf_zoo.py"
    spec = importlib.util.spec_from_file_location("hf_zoo", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


zoo = _load_zoo()
FAMILIES = ("t5", "bart", "albert", "llama", "swin", "convnext", "mobilevit", "mamba")
ZOO = {name: fam for name, fam in zoo.families().items() if name in FAMILIES}
STEPS = 4


def _train(family: str, path: str | None) -> tuple[nn.Module, NeuralDbg | None, list[str]]:
    """Train `family` for a few AdamW steps (dropout on), monitored when `path` is given."""
    return zoo.train(*ZOO[family], steps=STEPS, path=path)


@pytest.mark.parametrize("family", sorted(ZOO))
def test_the_monitor_records_every_layer_of_a_hugging_face_family(family, run_path):
    plain, _, _ = _train(family, None)
    model, dbg, internal = _train(family, run_path())
    assert dbg is not None
    assert not internal, internal
    assert "internal_error" not in dbg.run.meta
    ref = plain.state_dict()
    for k, v in model.state_dict().items():  # the monitor never changes training numerics
        assert torch.equal(v, ref[k]), k

    # every leaf module that runs in a forward pass is a node of an acyclic layer DAG
    ran: set[str] = set()
    names = {id(m): n for n, m in model.named_modules()}
    leaves = [m for m in model.modules() if not any(True for _ in m.children())]
    hooks = [m.register_forward_hook(lambda m, a, o: ran.add(names[id(m)])) for m in leaves]
    try:
        model(**ZOO[family][1](torch.Generator().manual_seed(0)))
    finally:
        for h in hooks:
            h.remove()
    run = dbg.run
    nodes = {n.name for n in run.dag.nodes}
    assert ran and ran <= nodes, sorted(ran - nodes)[:5]
    assert nx.is_directed_acyclic_graph(run.dag.to_networkx())
    assert run.dag.method == "autograd"  # torch.fx cannot trace these models
    assert len(run.series) == STEPS

    # a gradient norm for every leaf that ran with parameters of its own
    window = run.windows[-1]
    seen = {layer for layer in window.layers if window.series(layer, LayerStat.GRAD_NORM)}
    with_params = {names[id(m)] for m in leaves
                   if any(p.requires_grad for p in m.parameters(recurse=False))}
    assert (ran & with_params) <= seen, sorted((ran & with_params) - seen)[:5]


@pytest.mark.parametrize("family", ["gpt2", "t5"])
def test_reentrant_activation_checkpointing_keeps_the_layer_graph(family, run_path):
    """Hugging Face's activation checkpointing with use_reentrant=True runs every block under
    no_grad in the forward pass: the graph, recorded by following the values, is the one of
    the same model without checkpointing, and training stays bit-identical."""
    build, make_batch = zoo.families()[family]

    def checkpointed() -> nn.Module:
        model = build()
        model.activation_checkpointing_enable({"use_reentrant": True})
        return model

    _, plain, _ = zoo.train(build, make_batch, steps=STEPS, path=run_path())
    ref, _, _ = zoo.train(checkpointed, make_batch, steps=STEPS, path=None)
    model, dbg, internal = zoo.train(checkpointed, make_batch, steps=STEPS, path=run_path())
    assert not internal, internal
    for k, v in model.state_dict().items():
        assert torch.equal(v, ref.state_dict()[k]), k
    g = dbg.run.dag
    assert g.method == "provenance" and plain.run.dag.method == "autograd"
    assert set(g.edges) == set(plain.run.dag.edges)
    assert nx.is_directed_acyclic_graph(g.to_networkx())
