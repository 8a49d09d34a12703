"""Healthy runs of architectures the failure suite never saw: what neuraldbg says about them.

Each family is a Hugging Face model built from a tiny config (random weights as the library
initialises them, no download), trained for S AdamW steps (lr 1e-3, dropout on) on random
batches under the monitor's standard preset. A healthy short run should be diagnosed healthy:
any cause at or above the report threshold (0.5) is a false alarm, or a real problem of that
tiny config (the table shows which cause and at what confidence, so it can be looked at).
Also printed per family: how the layer DAG was built, its size, the events recorded,
whether the monitor stopped on an internal error, and the step time monitored over plain:
the monitored model and a plain twin (a deep copy, same batches) are stepped in turn, the
order swapped every step, so both share the host's state step by step; the ratio of median
step times, and of mean step times (which count the full-statistics steps and the batched
analysis), over the steps from --skip on (default: all but the first 10: attaching, the layer
DAG, the first full steps), median over --repeats runs (each from the same seed, so the same
diagnosis). Tiny models make that ratio a worst case: a few milliseconds per step, and the
monitor's cost per layer.

    .venv/bin/python benchmarks/hf_zoo.py [--steps 40] [--families gpt2,t5] [--threads 1]
        [--repeats 3] [--skip 10]

`tests/test_model_zoo.py` trains eight of these families to check the capture itself (every
layer recorded, training bit-identical); it loads `FAMILIES` from this file.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch

Batch = dict[str, torch.Tensor]
Family = tuple[Callable[[], torch.nn.Module], Callable[[torch.Generator], Batch]]

#: Steps left out of the step-time ratio: attaching, recording the layer DAG, the first
#: full-statistics steps.
WARM_STEPS = 10
_TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
VOCAB = 100


#: Each task draws its batches from a fixed pool of POOL examples, so that the models can learn
#: it (memorise it) in a few dozen steps: a run whose loss cannot fall is a stall, not a healthy
#: run, and the zoo checks the diagnosis of healthy runs.
POOL = 16


def _pool(key: str, make: Callable[[torch.Generator], torch.Tensor]) -> torch.Tensor:
    """POOL examples of one kind, the same in every run (seeded by `key`)."""
    if key not in _POOLS:
        g = torch.Generator().manual_seed(sum(map(ord, key)))
        _POOLS[key] = torch.stack([make(g) for _ in range(POOL)])
    return _POOLS[key]


_POOLS: dict[str, torch.Tensor] = {}


def _pick(g: torch.Generator) -> torch.Tensor:
    """Four pool indices for one batch."""
    return torch.randint(0, POOL, (4,), generator=g)


def tokens(g: torch.Generator) -> Batch:
    """Causal language modelling: the labels are the inputs."""
    ids = _pool("tokens", lambda h: torch.randint(0, VOCAB, (12,), generator=h))[_pick(g)]
    return dict(input_ids=ids, labels=ids)


def seq2seq(g: torch.Generator) -> Batch:
    """Copy the first 7 tokens."""
    ids = _pool("seq2seq", lambda h: torch.randint(0, VOCAB, (12,), generator=h))[_pick(g)]
    return dict(input_ids=ids, labels=ids[:, :7].clone())


def sentences(g: torch.Generator) -> Batch:
    i = _pick(g)
    ids = _pool("sentences", lambda h: torch.randint(0, VOCAB, (12,), generator=h))
    labels = _pool("sentence_labels", lambda h: torch.randint(0, 3, (), generator=h))
    return dict(input_ids=ids[i], labels=labels[i])


def images(g: torch.Generator) -> Batch:
    i = _pick(g)
    pixels = _pool("images", lambda h: torch.randn(3, 32, 32, generator=h))
    labels = _pool("image_labels", lambda h: torch.randint(0, 3, (), generator=h))
    return dict(pixel_values=pixels[i], labels=labels[i])


def families() -> dict[str, Family]:
    """Family name -> (build the model, make a batch from a generator)."""
    import transformers as T

    def causal_lm(cfg: Any, cls: Any, **kw: Any) -> Family:
        return (lambda: cls(cfg(vocab_size=VOCAB, **{**_TINY, **kw}))), tokens

    def classifier(cfg: Any, cls: Any, **kw: Any) -> Family:
        return (lambda: cls(cfg(vocab_size=VOCAB, num_labels=3, **{**_TINY, **kw}))), sentences

    def vision(cfg: Any, cls: Any, **kw: Any) -> Family:
        return (lambda: cls(cfg(num_labels=3, **kw))), images

    return {
        "bert": classifier(T.BertConfig, T.BertForSequenceClassification),
        "roberta": classifier(T.RobertaConfig, T.RobertaForSequenceClassification,
                              pad_token_id=1),
        "distilbert": classifier(T.DistilBertConfig, T.DistilBertForSequenceClassification,
                                 dim=32, n_layers=2, n_heads=4, hidden_dim=64),
        "albert": classifier(T.AlbertConfig, T.AlbertForSequenceClassification,
                             embedding_size=16),
        "electra": classifier(T.ElectraConfig, T.ElectraForSequenceClassification,
                              embedding_size=16),
        "gpt2": causal_lm(T.GPT2Config, T.GPT2LMHeadModel, n_embd=32, n_layer=2, n_head=4),
        "gpt_neo": causal_lm(T.GPTNeoConfig, T.GPTNeoForCausalLM,
                             attention_types=[[["global", "local"], 1]], window_size=4),
        "gpt_neox": causal_lm(T.GPTNeoXConfig, T.GPTNeoXForCausalLM),
        "llama": causal_lm(T.LlamaConfig, T.LlamaForCausalLM, num_key_value_heads=2),
        "mistral": causal_lm(T.MistralConfig, T.MistralForCausalLM, num_key_value_heads=2),
        "qwen2": causal_lm(T.Qwen2Config, T.Qwen2ForCausalLM, num_key_value_heads=2),
        "gemma": causal_lm(T.GemmaConfig, T.GemmaForCausalLM, num_key_value_heads=2,
                           head_dim=8),
        "phi": causal_lm(T.PhiConfig, T.PhiForCausalLM),
        "opt": causal_lm(T.OPTConfig, T.OPTForCausalLM, ffn_dim=64, word_embed_proj_dim=32),
        "bloom": causal_lm(T.BloomConfig, T.BloomForCausalLM, n_layer=2, n_head=4),
        "falcon": causal_lm(T.FalconConfig, T.FalconForCausalLM),
        "mamba": causal_lm(T.MambaConfig, T.MambaForCausalLM, state_size=4, expand=2),
        "t5": ((lambda: T.T5ForConditionalGeneration(T.T5Config(
            vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
            decoder_start_token_id=0))), seq2seq),
        "bart": ((lambda: T.BartForConditionalGeneration(T.BartConfig(
            vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
            decoder_ffn_dim=64))), seq2seq),
        "vit": vision(T.ViTConfig, T.ViTForImageClassification, image_size=32, patch_size=8,
                      **_TINY),
        "deit": vision(T.DeiTConfig, T.DeiTForImageClassification, image_size=32,
                       patch_size=8, **_TINY),
        "swin": vision(T.SwinConfig, T.SwinForImageClassification, image_size=32,
                       patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2],
                       window_size=4),
        "convnext": vision(T.ConvNextConfig, T.ConvNextForImageClassification,
                           hidden_sizes=[8, 16], depths=[1, 1], num_stages=2),
        "resnet": vision(T.ResNetConfig, T.ResNetForImageClassification, embedding_size=8,
                         hidden_sizes=[8, 16], depths=[1, 1]),
        "mobilenet_v2": vision(T.MobileNetV2Config, T.MobileNetV2ForImageClassification,
                               image_size=32, depth_multiplier=0.25),
        "mobilevit": vision(T.MobileViTConfig, T.MobileViTForImageClassification,
                            image_size=32, hidden_sizes=[16, 24, 32],
                            neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32]),
    }


def _model_and_batches(build: Callable[[], torch.nn.Module],
                       make_batch: Callable[[torch.Generator], Batch], steps: int
                       ) -> tuple[torch.nn.Module, list[Batch]]:
    """The model from seed 0 in training mode (dropout on), and `steps` batches from seed 1."""
    torch.manual_seed(0)
    model = build()
    model.train()
    g = torch.Generator().manual_seed(1)
    return model, [make_batch(g) for _ in range(steps)]


@contextlib.contextmanager
def _internal_errors() -> Iterator[list[str]]:
    """Collects the monitor's internal-error warnings (NeuralDbgWarning) raised inside."""
    from neuraldbg.errors import NeuralDbgWarning

    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NeuralDbgWarning)
        yield found
    found += [str(w.message) for w in caught if issubclass(w.category, NeuralDbgWarning)]


def _step(model: torch.nn.Module, opt: torch.optim.Optimizer, dbg: Any, batch: Batch) -> None:
    opt.zero_grad()
    loss = model(**batch).loss
    loss.backward()
    if dbg is not None:
        dbg.record_loss(loss)
    opt.step()


def train(build: Callable[[], torch.nn.Module], make_batch: Callable[[torch.Generator], Batch],
          steps: int, path: str | Path | None, preset: str = "standard"
          ) -> tuple[torch.nn.Module, Any, list[str]]:
    """`steps` AdamW steps (lr 1e-3), monitored when `path` is given. Returns the model, the
    monitor (or None) and the monitor's internal-error warnings."""
    from neuraldbg import NeuralDbg

    model, batches = _model_and_batches(build, make_batch, steps)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    dbg = NeuralDbg(model, path=path, preset=preset) if path is not None else None
    with _internal_errors() as internal, dbg if dbg is not None else contextlib.nullcontext():
        for batch in batches:
            _step(model, opt, dbg, batch)
    return model, dbg, internal


def train_with_twin(build: Callable[[], torch.nn.Module],
                    make_batch: Callable[[torch.Generator], Batch], steps: int,
                    path: str | Path) -> tuple[torch.nn.Module, Any, list[str], list[float],
                                               list[float]]:
    """`train`'s monitored run, with a plain twin (a deep copy, its own AdamW) stepped in turn
    on the same batches, the order swapped every step. Returns the monitored model, the
    monitor, its internal-error warnings and each step's wall time plain and monitored."""
    from neuraldbg import NeuralDbg

    model, batches = _model_and_batches(build, make_batch, steps)
    twin = copy.deepcopy(model)
    pairs = ((twin, torch.optim.AdamW(twin.parameters(), lr=1e-3), None),
             (model, torch.optim.AdamW(model.parameters(), lr=1e-3), NeuralDbg(model, path=path)))
    times: tuple[list[float], list[float]] = ([], [])
    with _internal_errors() as internal, pairs[1][2]:
        for i, batch in enumerate(batches):
            for k in ((0, 1) if i % 2 else (1, 0)):
                t0 = time.perf_counter()
                _step(*pairs[k], batch)
                times[k].append(time.perf_counter() - t0)
    return model, pairs[1][2], internal, times[0], times[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--families", default="", help="comma-separated (default: all)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--keep", default="", help="write the run files to this folder (kept, so "
                    "that `neuraldbg diagnose` can read them again) instead of a temporary one")
    ap.add_argument("--repeats", type=int, default=3,
                    help="monitored runs (each with its plain twin) per family for the "
                         "step-time ratios (median)")
    ap.add_argument("--skip", type=int, default=WARM_STEPS,
                    help="steps left out of the step-time ratios")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    from transformers.utils import logging as hf_logging

    from causal.diagnose import diagnose

    hf_logging.set_verbosity_error()
    zoo = families()
    names = [n for n in args.families.split(",") if n] or list(zoo)
    unknown = sorted(set(names) - set(zoo))
    if unknown:
        raise SystemExit(f"unknown families {unknown}; choose among {', '.join(zoo)}")
    print(f"torch {torch.__version__}, threads {args.threads}, steps {args.steps}, "
          f"repeats {args.repeats}, step times from step {args.skip} on, AdamW lr 1e-3, "
          "preset standard\n")
    print("| family | params | DAG | nodes | events | top cause | failing | healthy "
          "| internal error | step x | step x (mean) |")
    print("|---|---:|---|---:|---:|---|---:|---|---|---:|---:|")
    healthy = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = args.keep or tmp
        for name in names:
            build, make_batch = zoo[name]
            warm = min(args.skip, args.steps // 2)  # attach, DAG recording, first full steps
            ratios, mean_ratios = [], []
            for r in range(args.repeats):  # the same steps each time
                model, dbg, internal, plain, monitored = train_with_twin(
                    build, make_batch, args.steps, Path(tmp, f"{name}-{r}.ndbg"))
                ratios.append(statistics.median(monitored[warm:])
                              / statistics.median(plain[warm:]))
                mean_ratios.append(statistics.mean(monitored[warm:])
                                   / statistics.mean(plain[warm:]))
            ratio, mean_ratio = statistics.median(ratios), statistics.median(mean_ratios)
            run = dbg.run
            hyps = diagnose(run)
            ok = hyps.healthy
            healthy += ok
            top = f"{hyps[0].cause} {hyps[0].confidence:.2f}" if hyps else "-"
            n_params = sum(p.numel() for p in model.parameters())
            print(f"| {name} | {n_params:,} | {run.dag.method} | {len(run.dag.nodes)} | "
                  f"{len(run.events)} | {top} | {hyps.failing:.2f} | {'yes' if ok else 'NO'} | "
                  f"{internal[0] if internal else 'none'} | {ratio:.2f} | {mean_ratio:.2f} |",
                  flush=True)
    print(f"\nhealthy {healthy}/{len(names)}; total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
