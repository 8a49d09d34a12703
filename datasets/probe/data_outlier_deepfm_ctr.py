"""data_outlier: a DeepFM click-through-rate model (FM + deep tower over shared field embeddings, a
dense-feature projection as one more "field") trained with plain SGD; one batch carries a sensor/
logging glitch where a numeric feature reads 1e6 for a few rows.

Mechanism (the classic CTR-pipeline failure: a counter overflow / unit bug / default sentinel like
999999 in one numeric column; cf. Criteo-dataset threads "DeepFM loss becomes nan after some
iterations" and the advice to clip/log-transform numeric features): the glitch values enter
`dense_proj`, whose output embedding becomes ~1e5-1e6. The FM second-order term squares it, the
logits reach ~1e10, and although BCE-with-logits stays finite on that batch its gradient w.r.t.
`dense_proj.weight` is multiplied by the raw 1e6 input. One SGD step blows `dense_proj` (and through
it the deep tower) up; a few steps later the loss is astronomically large and then NaN. Before the
glitch batch (step 15 + 7*seed) the run is calm and learning.

ORIGIN = "dense_proj": the first (and only) layer that consumes the numeric features, so the first
to see the corrupt 1e6 values; every other layer is hit through its output.

fixed=True: the data pipeline clips standardised numeric features to [-6, 6] (a no-op for every
clean batch, so it only defuses the corrupt rows). Model, optimiser, lr, data and order are the same.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "dense_proj"
SOURCE = ("DeepFM/CTR training with a corrupt numeric feature (logging glitch / sentinel 1e6) in one batch: "
          "loss spikes then NaN; fix = clip or filter numeric features (Criteo DeepFM 'loss nan' reports)")

NF, V, K, ND = 6, 40, 8, 4   # categorical fields, vocab per field, embedding dim, numeric features


class DeepFM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(NF * V, K)
        self.lin = nn.Embedding(NF * V, 1)
        self.dense_proj = nn.Linear(ND, K)
        self.deep = nn.Sequential(nn.Linear((NF + 1) * K, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                                  nn.Linear(32, 1))
        nn.init.normal_(self.emb.weight, std=0.05)
        nn.init.zeros_(self.lin.weight)
        self.register_buffer("off", torch.arange(NF) * V)

    def forward(self, cat, dense):
        idx = cat + self.off
        e = torch.cat([self.emb(idx), self.dense_proj(dense).unsqueeze(1)], 1)   # B, NF+1, K
        fm = 0.5 * ((e.sum(1) ** 2) - (e ** 2).sum(1)).sum(1, keepdim=True)
        first = self.lin(idx).sum(1)
        return (first + fm + self.deep(e.flatten(1))).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    B, steps = 128, 200
    we = torch.randn(NF * V, 4, generator=g) * 0.7
    wd = torch.randn(ND, generator=g) * 0.7
    wb = torch.randn(NF * V, generator=g) * 0.5
    off = torch.arange(NF) * V
    glitch_step = 15 + 7 * seed
    batches = []
    for t in range(steps):
        cat = torch.randint(0, V, (B, NF), generator=g)
        dense = torch.randn(B, ND, generator=g)                 # already standardised numeric features
        idx = cat + off
        z = we[idx]
        logit = 3 * (wb[idx].sum(1) * 0.5 + dense @ wd
                     + 0.5 * ((z.sum(1) ** 2 - (z ** 2).sum(1)).sum(1)) * 0.3 - 0.5)
        y = (logit > 0).float()
        if t == glitch_step:                                     # logging glitch: 8 rows read 1e6
            rows = torch.randperm(B, generator=g)[:8]
            dense[rows, 2] = 1e6
        if fixed:
            dense = dense.clamp(-6.0, 6.0)
        batches.append(((cat, dense), y))
    model = DeepFM()
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    return dict(model=model, optimizer=opt, loss_fn=F.binary_cross_entropy_with_logits, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
