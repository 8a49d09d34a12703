"""One-layer transformer on modular addition (Nanda et al. 2023 'Progress measures for grokking'
setup): tokens [a, b, =], learned positional embeddings, one attention block + ReLU MLP, the
answer (a + b) mod p is read from the '=' position. AdamW with weight decay 1.0 on a random half
of the p^2 pairs.

Mechanism: the lr was raised to 4e-2 .. 6e-2 ("grokking takes too long") instead of the 1e-3
used with this batch size. Adam's per-parameter step is ~lr regardless of gradient size, so every
weight moves by a few percent of its scale per step: the attention logits and residual stream
jump around, the model keeps overshooting and settles near the uniform prediction. The training
loss hovers around or above ln(p) for the whole run (no memorisation at all), while it never
becomes non-finite (pre-LN, bounded softmax).

ORIGIN = None: a global optimiser setting; all parameter groups are over-stepped at once.

Fix: lr 1e-3 (the reference setting, with its usual short linear warmup absent in both runs);
same model, weight decay, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Nanda et al. 2023 'Progress measures for grokking via mechanistic interpretability' "
          "(1-layer transformer, AdamW lr 1e-3, wd 1); Power et al. 2022 grokking; practitioner "
          "reports that raising Adam lr on algorithmic tasks leaves the loss stuck near ln(p)")


class OneLayerTransformer(nn.Module):
    def __init__(self, p, d, heads):
        super().__init__()
        self.embed = nn.Embedding(p + 1, d)
        self.pos = nn.Parameter(torch.randn(3, d) * 0.02)
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.ReLU(), nn.Linear(4 * d, d))
        self.unembed = nn.Linear(d, p)

    def forward(self, tok):
        h = self.embed(tok) + self.pos
        q = self.ln1(h)
        h = h + self.attn(q, q, q, need_weights=False)[0]
        h = h + self.mlp(self.ln2(h))
        return self.unembed(h[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(10000 + seed)
    p = [23, 29, 31][seed % 3]
    d = [64, 96, 128][seed % 3]
    heads = [4, 4, 4][seed % 3]
    bs = [128, 96, 160][seed % 3]
    lr_bad = [5e-2, 6e-2, 4e-2][seed % 3]
    steps = 200
    a, b = torch.meshgrid(torch.arange(p), torch.arange(p), indexing="ij")
    a, b = a.flatten(), b.flatten()
    perm = torch.randperm(p * p, generator=g)[: (p * p) // 2]
    tok = torch.stack([a[perm], b[perm], torch.full_like(a[perm], p)], 1)
    y = (a[perm] + b[perm]) % p
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, len(perm), (bs,), generator=g)
        batches.append((tok[idx], y[idx]))
    torch.manual_seed(seed)
    model = OneLayerTransformer(p, d, heads)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3 if fixed else lr_bad, weight_decay=1.0,
                            betas=(0.9, 0.98))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
