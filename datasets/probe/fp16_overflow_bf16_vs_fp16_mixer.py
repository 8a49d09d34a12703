"""fp16_overflow: an attention-free (AFT) token mixer's exp(key) sums overflow float16.

Mechanism: a small sequence classifier with an auxiliary regression head; the model returns a
dict ``{"logits": ..., "aux": ...}`` and the loss reads both. Its token mixer is an Attention
Free Transformer layer (AFT-full, Zhai et al. 2021; the same exp-weighted sum is the WKV of
RWKV): Y_t = sigmoid(q_t) * sum_s exp(w_ts) exp(k_s) v_s / sum_s exp(w_ts) exp(k_s), per
channel, written directly as ``exp(k)`` and two matmuls with ``exp(w)``, without subtracting
the running maximum of k. The model is a checkpoint pre-trained in bfloat16: the mixer's output
is invariant to a per-channel shift of k, so the key biases drifted upwards there unnoticed
(each seed sets the drift so that the first batch's largest numerator is 8-16x below the
float16 maximum). It is now fine-tuned under ``torch.autocast(float16)`` with a GradScaler:
the q/k/v projections and both matmuls run in float16, and ``torch.exp`` follows its input.
The task (read the token at a marked position; the aux head regresses the share of "high"
tokens) rewards a mixer that puts its weight on the marked position, so training drives the
marked token's keys up, step after step. The run is calm and the loss falls for 50-80 steps,
then the numerator sum over 16-32 tokens, exp(k) v with keys near 10 (exp(k) itself is still
below 65504, which it passes at k > 11.09), goes past 65504 and becomes inf; the ratio is
inf/inf = NaN, and the logits, aux and loss are NaN. Which step depends on the lr, the width,
the sequence length and the drift (seed). A GradScaler cannot help: it scales the backward
pass, not forward activations.

ORIGIN: ``mixer``, the AFT module whose float16 exp-weighted sums overflow (``exp`` and the
matmuls are functional ops inside it; its ``q``/``k``/``v`` Linears stay finite and ``mixer.o``
only receives the NaN).
Fixed: the same model, checkpoint, data and optimizer under ``torch.autocast(bfloat16)``
(bfloat16 has float32's exponent range, so the sums stay finite; as usual with bfloat16, no
GradScaler). The loss goes to about 0.01.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

CAUSE = "fp16_overflow"
ORIGIN = "mixer"
SOURCE = (
    "Zhai et al. 2021, 'An Attention Free Transformer' (exp(K) weighted sums); RWKV issues on "
    "fp16 overflow/NaN in the WKV exp sums (fixed by max-subtraction or bf16); PyTorch AMP docs "
    "and forum threads 'NaN with autocast float16, works with bfloat16'."
)

FP16_MAX = 65504.0


class AFTMixer(nn.Module):
    """AFT-full token mixing with a learned pairwise position bias, no max subtraction."""

    def __init__(self, dim: int, seq_len: int) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.w = nn.Parameter(torch.zeros(seq_len, seq_len))
        self.o = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.q(x), self.k(x), self.v(x)
        ek = torch.exp(k)  # float16 under autocast: inf once k > 11.09
        pos = torch.exp(self.w)
        num = torch.matmul(pos, ek * v)  # sum over tokens, float16 under autocast
        den = torch.matmul(pos, ek)
        return self.o(torch.sigmoid(q) * num / den)


class AFTClassifier(nn.Module):
    def __init__(self, vocab: int, seq_len: int, dim: int, classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mark = nn.Embedding(2, dim)
        self.pos = nn.Parameter(0.02 * torch.randn(seq_len, dim))
        self.norm1 = nn.LayerNorm(dim)
        self.mixer = AFTMixer(dim, seq_len)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.head = nn.Linear(dim, classes)
        self.aux = nn.Linear(dim, 1)

    def forward(self, tokens: torch.Tensor, marked: torch.Tensor) -> dict:
        h = self.embed(tokens) + self.mark(marked) + self.pos
        h = h + self.mixer(self.norm1(h))
        h = h + self.mlp(self.norm2(h))
        pooled = h.mean(dim=1)
        return {"logits": self.head(pooled), "aux": self.aux(pooled).squeeze(-1)}


def _loss(out: dict, y: torch.Tensor) -> torch.Tensor:
    """y[:, 0] is the class, y[:, 1] the auxiliary target."""
    ce = nn.functional.cross_entropy(out["logits"].float(), y[:, 0].long())
    return ce + 0.5 * nn.functional.mse_loss(out["aux"].float(), y[:, 1])


def _data(seed: int, steps: int, batch: int, seq_len: int, vocab: int, classes: int) -> list:
    """Random token sequences with one marked position; the class is the marked token's id
    modulo ``classes``, the aux target the standardised share of tokens in the upper half of
    the vocabulary."""
    g = torch.Generator().manual_seed(340_000 + seed)
    batches = []
    for _ in range(steps):
        tokens = torch.randint(0, vocab, (batch, seq_len), generator=g)
        where = torch.randint(0, seq_len, (batch,), generator=g)
        marked = torch.zeros(batch, seq_len, dtype=torch.long)
        marked[torch.arange(batch), where] = 1
        cls = tokens[torch.arange(batch), where] % classes
        share = (tokens >= vocab // 2).float().mean(dim=1)
        aux = (share - 0.5) / (0.5 / seq_len**0.5)
        batches.append(((tokens, marked), torch.stack([cls.float(), aux], dim=1)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    rng = random.Random(seed)
    dim = rng.choice([32, 48, 64])
    seq_len = rng.choice([16, 24, 32])
    classes = rng.choice([4, 6, 8])
    vocab = classes * rng.choice([2, 3])
    batch = rng.choice([32, 48, 64])
    steps = rng.choice([150, 180, 200])
    lr = rng.choice([3e-3, 5e-3])
    headroom = rng.choice([8.0, 12.0, 16.0])  # how far below 65504 the checkpoint starts

    batches = _data(seed, steps, batch, seq_len, vocab, classes)
    torch.manual_seed(seed)
    model = AFTClassifier(vocab, seq_len, dim, classes)
    with torch.no_grad():
        # The "bf16-pretrained" checkpoint: AFT is invariant to a per-channel shift of k, so in
        # bf16/fp32 pre-training the key biases drifted up unnoticed. Their offset is set so that
        # the largest numerator of the first batch sits `headroom` times below the fp16 maximum.
        (tokens, marked), _ = batches[0]
        mix = model.mixer
        x = model.norm1(model.embed(tokens) + model.mark(marked) + model.pos)
        num = torch.matmul(torch.exp(mix.w), torch.exp(mix.k(x)) * mix.v(x)).abs().amax()
        mix.k.bias.add_(math.log(FP16_MAX / headroom / float(num)))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    return {
        "model": model,
        "optimizer": opt,
        "loss_fn": _loss,
        "batches": batches,
        "steps": steps,
        "amp_dtype": torch.bfloat16 if fixed else torch.float16,
        "scaler": None if fixed else torch.amp.GradScaler("cpu", init_scale=2.0**12),
    }
