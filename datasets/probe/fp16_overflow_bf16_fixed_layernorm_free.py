"""fp16_overflow: a LayerNorm-free residual block stack whose residual stream outgrows float16.

Mechanism: a small transformer-like encoder (a linear patch embedding, four pre-activation
residual blocks ``h = h + mix(relu(h))`` over tokens and ``h = h + fc2(relu(fc1(relu(h))))``
over channels, *no* LayerNorm anywhere in the stack, as in Fixup/ReZero-style norm-free
transformers) feeds a cosine-softmax classifier (the pooled features and the class weights are
L2-normalised, CosFace/normalised-softmax style, in float32). The loss is therefore blind to the
scale of the residual stream, and nothing in the stack bounds it: the "pretrained" checkpoint
already carries a large residual stream (its peak matmul output sits at a seeded fraction of
the float16 maximum, the "massive activations" of norm-free and T5-style models), and
fine-tuning with Adam and no weight decay grows it further (the norm of scale-invariant weights
only grows under gradient descent). The run uses ``torch.autocast(float16)`` with a GradScaler,
which looks after the *gradients* (they are tiny, the loss being scale-invariant) but not the
forward activations. The residual stream itself is float16 (the embedding Linear runs under
autocast), and each block adds its branch to it. Training is calm for a few to a few tens of
steps (the loss falls), until the stream at the output of the last block, the largest one,
passes 65504 in the float16 residual addition: it becomes ``inf``, the pooled feature is
``inf``, its normalisation gives ``inf / inf = NaN`` and the loss is NaN. The step depends on
the seed (width, tokens, batch, lr and the starting fraction).

ORIGIN: ``blocks.3``, the last residual block: the first non-finite value of the run is its
output, born in its float16 residual addition ``h + fc2(...)`` (a function, not a submodule);
its Linears ``mix``, ``fc1`` and ``fc2`` and every earlier block are still finite at that step,
and the head runs in float32.
Fixed: the same model and the same run under ``torch.autocast(bfloat16)``: bfloat16 has
float32's exponent range, so the growing stream stays finite; no GradScaler is needed (bf16
gradients do not underflow), so ``scaler`` is None. Nothing else changes.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "fp16_overflow"
ORIGIN = "blocks.3"
SOURCE = (
    "T5 / mT5 / Pegasus fine-tuning in fp16 giving inf/NaN because the bf16-pretrained residual "
    "stream and feed-forward outputs exceed 65504 (Hugging Face transformers issues; the clamp "
    "in T5LayerFF and the 'use bf16' advice); norm-free residual transformers (Fixup, ReZero, "
    "T-Fixup); 'Massive activations in LLMs' (Sun et al. 2024); normalised-softmax heads."
)

FP16_MAX = 65504.0
DEPTH = 4


class Block(nn.Module):
    def __init__(self, dim: int, tokens: int) -> None:
        super().__init__()
        self.mix = nn.Linear(tokens, tokens)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = h + self.mix(torch.relu(h).transpose(1, 2)).transpose(1, 2)
        return h + self.fc2(torch.relu(self.fc1(torch.relu(h))))


class CosineHead(nn.Module):
    def __init__(self, dim: int, classes: int, scale: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(classes, dim) / dim**0.5)
        self.scale = scale

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        with torch.autocast(device_type="cpu", enabled=False):
            f = nn.functional.normalize(h.float(), dim=-1)
            w = nn.functional.normalize(self.weight, dim=-1)
            return self.scale * f @ w.t()


class NormFreeEncoder(nn.Module):
    def __init__(self, d_in: int, dim: int, tokens: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Linear(d_in, dim)
        self.blocks = nn.Sequential(*[Block(dim, tokens) for _ in range(DEPTH)])
        self.head = CosineHead(dim, classes, scale=16.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.embed(x)).mean(dim=1))


def _linear_peak(model: nn.Module, x: torch.Tensor) -> float:
    peak = [0.0]

    def hook(m: nn.Module, i: tuple, o: torch.Tensor) -> None:
        peak[0] = max(peak[0], float(o.abs().max()))

    hooks = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, nn.Linear)]
    with torch.no_grad():
        model(x)
    for hk in hooks:
        hk.remove()
    return peak[0]


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([12, 16, 24])
    dim = rng.choice([24, 32, 48])
    tokens = rng.choice([8, 12, 16])
    classes = rng.choice([4, 5, 6])
    batch = rng.choice([16, 24, 32])
    steps = rng.choice([120, 135, 150])
    lr = rng.choice([3e-3, 4e-3])
    start = rng.choice([0.15, 0.2, 0.25])  # initial peak as a fraction of the float16 maximum

    g = torch.Generator().manual_seed(430_000 + seed)
    protos = torch.randn(classes, tokens, d_in, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, classes, (batch,), generator=g)
        x = protos[y] + 1.5 * torch.randn(batch, tokens, d_in, generator=g)
        batches.append((x, y))

    torch.manual_seed(seed)
    model = NormFreeEncoder(d_in, dim, tokens, classes)
    with torch.no_grad():
        # The "pretrained" residual stream scale: ReLU blocks are positively homogeneous, so
        # scaling the embedding (weight and bias) and every bias in the stack scales the stream.
        for m in model.blocks.modules():
            if isinstance(m, nn.Linear):
                m.bias.zero_()
        peak = _linear_peak(model, torch.cat([x for x, _ in batches[:4]]))
        factor = start * FP16_MAX / peak
        model.embed.weight.mul_(factor)
        model.embed.bias.mul_(factor)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.CrossEntropyLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": torch.bfloat16 if fixed else torch.float16,
        "scaler": None if fixed else torch.amp.GradScaler("cpu", init_scale=2.0**16),
    }
