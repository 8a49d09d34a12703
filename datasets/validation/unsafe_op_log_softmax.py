"""unsafe_op: log(softmax(z)) computed naively in a CLIP-style contrastive loss head.

Mechanism: a siamese MLP encoder embeds two noisy views of each sample; the logits are the
cosine similarities of the L2-normalised embeddings times CLIP's logit scale of 100 (the value
its learnable temperature reaches and is clamped at), each row's positive being the diagonal.
The head turns the logits into log-probabilities with ``torch.log(torch.softmax(z, -1))`` (then
``nll_loss``) instead of ``log_softmax`` or ``cross_entropy``. The "pretrained" embeddings sit
in a narrow cone (a shared offset dominates them, CLIP's modality gap), so the similarities
start in a narrow band and all is calm. Fine-tuning spreads them: the positives align and the
negatives move apart, until the gap between a row's largest and smallest logit passes ~104;
that probability underflows to exactly 0.0 in float32 and its log is ``-inf``. The NLL loss can
stay finite (it only reads the diagonal), but the backward of ``log`` divides the zero upstream
gradient by the zero probability, 0/0 = NaN, so the weights become NaN and the next loss is NaN.
The step depends on the cone's width, the lr, the batch size and the encoder (seeded).

ORIGIN: ``log_probs``, the module that contains the naive ``log(softmax)`` (forward-born ``-inf``
on finite logits; the NaN is then born in its backward).
Fixed: the same module computing ``torch.log_softmax(z, -1)``, which is exact for any logits.
"""

from __future__ import annotations

import random

import torch
from torch import nn

CAUSE = "unsafe_op"
ORIGIN = "log_probs"
SOURCE = (
    "The 'log(softmax(x)) gives -inf/NaN, use log_softmax' pattern (PyTorch forum and Stack "
    "Overflow threads; the F.log_softmax and nll_loss docs) in a hand-written contrastive loss "
    "with CLIP's logit scale of 100 (Radford et al. 2021, logit_scale clamped at 100) and its "
    "narrow-cone embeddings (Liang et al. 2022, 'Mind the Gap')."
)


class LogProbs(nn.Module):
    def __init__(self, fused: bool) -> None:
        super().__init__()
        self.fused = fused

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if self.fused:
            return torch.log_softmax(z, dim=-1)
        return torch.log(torch.softmax(z, dim=-1))


class Contrastive(nn.Module):
    def __init__(self, d_in: int, width: int, depth: int, emb: int, fused: bool) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        dims = [d_in] + [width] * depth
        for i in range(depth):
            layers += [nn.Linear(dims[i], dims[i + 1]), nn.ReLU()]
        layers.append(nn.Linear(width, emb))
        self.encoder = nn.Sequential(*layers)
        self.scale = 100.0  # CLIP's logit scale after pre-training (its clamp value)
        self.log_probs = LogProbs(fused)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ea = nn.functional.normalize(self.encoder(a), dim=-1)
        eb = nn.functional.normalize(self.encoder(b), dim=-1)
        return self.log_probs(self.scale * ea @ eb.t())


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    d_in = rng.choice([8, 12, 16])
    width = rng.choice([32, 64, 128])
    depth = rng.choice([1, 2])
    emb = rng.choice([8, 12, 16])
    batch = rng.choice([64, 96, 128])
    steps = rng.choice([200, 250, 300])
    lr = rng.choice([1e-3, 2e-3])
    cone = rng.choice([4.0, 6.0, 8.0])
    noise = rng.choice([0.1, 0.2, 0.3])

    g = torch.Generator().manual_seed(180_000 + seed)
    mix = torch.randn(d_in, d_in, generator=g) / d_in**0.5
    batches = []
    for _ in range(steps):
        z = torch.randn(batch, d_in, generator=g) @ mix
        a = z + noise * torch.randn(batch, d_in, generator=g)
        b = z + noise * torch.randn(batch, d_in, generator=g)
        batches.append(((a, b), torch.arange(batch)))

    torch.manual_seed(seed)
    model = Contrastive(d_in, width, depth, emb, fused=fixed)
    with torch.no_grad():
        # "Pretrained" embeddings in a narrow cone: a shared offset dominates every embedding, so
        # the cosine similarities start in a narrow band (CLIP's modality gap / anisotropy).
        last = model.encoder[-1]
        direction = torch.randn(emb, generator=g)
        last.bias.copy_(cone * direction / direction.norm())
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": nn.NLLLoss(),
        "batches": batches,
        "steps": steps,
        "amp_dtype": None,
        "scaler": None,
    }
