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

import warnings
from collections.abc import Callable
from typing import Any

import networkx as nx
import pytest
import torch
from torch import nn

from causal.run import LayerStat
from neuraldbg import NeuralDbg
from neuraldbg.monitor import NeuralDbgWarning

transformers = pytest.importorskip("transformers")

_TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


def _tokens(g: torch.Generator) -> dict[str, torch.Tensor]:
    ids = torch.randint(0, 100, (4, 12), generator=g)
    return dict(input_ids=ids, labels=ids)


def _seq2seq(g: torch.Generator) -> dict[str, torch.Tensor]:
    return dict(input_ids=torch.randint(0, 100, (4, 12), generator=g),
                labels=torch.randint(0, 100, (4, 7), generator=g))


def _sentences(g: torch.Generator) -> dict[str, torch.Tensor]:
    return dict(input_ids=torch.randint(0, 100, (4, 12), generator=g),
                labels=torch.randint(0, 3, (4,), generator=g))


def _images(g: torch.Generator) -> dict[str, torch.Tensor]:
    return dict(pixel_values=torch.randn(4, 3, 32, 32, generator=g),
                labels=torch.randint(0, 3, (4,), generator=g))


def _zoo() -> dict[str, tuple[Callable[[], nn.Module], Callable[..., dict[str, Any]]]]:
    T = transformers
    return {
        "t5": (lambda: T.T5ForConditionalGeneration(T.T5Config(
            vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
            decoder_start_token_id=0)), _seq2seq),
        "bart": (lambda: T.BartForConditionalGeneration(T.BartConfig(
            vocab_size=100, d_model=32, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
            decoder_ffn_dim=64)), _seq2seq),
        "albert": (lambda: T.AlbertForSequenceClassification(T.AlbertConfig(
            vocab_size=100, num_labels=3, embedding_size=16, **_TINY)), _sentences),
        "llama": (lambda: T.LlamaForCausalLM(T.LlamaConfig(
            vocab_size=100, num_key_value_heads=2, **_TINY)), _tokens),
        "swin": (lambda: T.SwinForImageClassification(T.SwinConfig(
            num_labels=3, image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
            num_heads=[2, 2], window_size=4)), _images),
        "convnext": (lambda: T.ConvNextForImageClassification(T.ConvNextConfig(
            num_labels=3, hidden_sizes=[8, 16], depths=[1, 1], num_stages=2)), _images),
        "mobilevit": (lambda: T.MobileViTForImageClassification(T.MobileViTConfig(
            num_labels=3, image_size=32, hidden_sizes=[16, 24, 32],
            neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32])), _images),
        "mamba": (lambda: T.MambaForCausalLM(T.MambaConfig(
            vocab_size=100, state_size=4, expand=2, **_TINY)), _tokens),
    }


ZOO = _zoo()
STEPS = 4


def _train(family: str, path: str | None) -> tuple[nn.Module, NeuralDbg | None, list[str]]:
    """Train `family` for a few AdamW steps (dropout on), monitored when `path` is given."""
    build, make_batch = ZOO[family]
    torch.manual_seed(0)
    model = build()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    batches = [make_batch(g) for _ in range(STEPS)]
    dbg = NeuralDbg(model, path=path) if path is not None else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NeuralDbgWarning)
        if dbg is not None:
            dbg.start()
        try:
            for batch in batches:
                opt.zero_grad()
                loss = model(**batch).loss
                loss.backward()
                if dbg is not None:
                    dbg.record_loss(loss)
                opt.step()
        finally:
            if dbg is not None:
                dbg.close()
    internal = [str(w.message) for w in caught if issubclass(w.category, NeuralDbgWarning)]
    return model, dbg, internal


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
