"""saturation: an EmbeddingBag CTR model whose user history is sum-pooled over 60-250 items;
the pooled vector drives the first Tanh of the MLP deep into saturation from step 0.

Model and data
    Users and items belong to K = 4 latent taste clusters (25 items each). A user's history
    is a bag of 60-250 item ids drawn from the user's cluster; the candidate item comes from
    the same cluster (click, y = 1) or from another cluster (y = 0), 50/50. Model (a small
    Wide&Deep/DLRM-style tower): ``nn.EmbeddingBag(n_items, d, mode="sum")`` over the history
    (1-D ids + offsets, the usual ragged input), ``nn.Embedding`` for the candidate,
    concatenation -> Linear(2d, 64) -> Tanh -> Linear(64, 1) (zero-initialised output layer),
    BCE-with-logits. Adagrad (the classic optimiser for sparse embedding models), lr
    0.1-0.2, batch 64, 250 steps. Embeddings keep PyTorch's default N(0, 1) init.

Mechanism (measured, seeds 0/1/2)
    1. Sum pooling of 60-250 unit-variance embeddings gives a history vector whose
       coordinates have std ~sqrt(bag length) ~ 8-15, against ~1 for the candidate embedding.
       At step 0 the pre-activations of the first Tanh have median |x| = 9.2 / 10.6 / 5.8;
       81-90% of them have |x| > 2 and 64-79% have |x| > 4, where tanh'(x) < 1.4e-3.
    2. The gradient to everything below the Tanh (the first Linear, both embedding tables) is
       multiplied by tanh'(x). The history dominates the pre-activation, so the Tanh output is
       a near-binary code of the user alone and carries almost nothing about the candidate.
       The few unsaturated units get large sum-pooled gradients, Adagrad grows the first
       Linear, and by step 100 99-100% of the pre-activations have |x| > 4 (median 34-115);
       the history-embedding gradient norm falls to 2.5e-5 - 9e-3 by the end.
    3. Only the output layer learns, on codes that cannot express the user x item match: the
       loss stays at ln 2 = 0.693 for all 250 steps (mean of the last 10% / min of the first
       5 = 1.01-1.03) -> stall.
    With mean pooling (fixed) the same pre-activations start at median |x| ~0.28 (none above
    2), gradients reach the embeddings, and the model learns the cluster match: the loss
    falls to 0.005-0.02 (r = 0.01-0.03).

ORIGIN
    "mlp.1": the first saturating activation (the Tanh after the first Linear).

fixed=True
    Only the pooling changes: ``EmbeddingBag(mode="mean")``, which keeps the pre-activations
    of the same Tanh small; init, data, optimiser and lr are identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "mlp.1"
SOURCE = ("sum-pooled EmbeddingBag features (DLRM-style, facebookresearch/dlrm#164 on mode='sum') "
          "feeding a tanh layer without normalisation; Glorot & Bengio 2010 on saturated tanh "
          "units stalling training; the Airbnb search paper's note that out-of-range feature "
          "values break training (discussed in Liam0205/liam0205.github.io#262)")


class CTRModel(nn.Module):
    def __init__(self, n_items, dim, hidden, mode):
        super().__init__()
        self.history = nn.EmbeddingBag(n_items, dim, mode=mode)
        self.item = nn.Embedding(n_items, dim)
        self.mlp = nn.Sequential(nn.Linear(2 * dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        nn.init.zeros_(self.mlp[2].weight)
        nn.init.zeros_(self.mlp[2].bias)

    def forward(self, flat_hist, offsets, target):
        u = self.history(flat_hist, offsets)
        v = self.item(target)
        return self.mlp(torch.cat([u, v], 1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(7000 + seed)
    K, per = 4, 25
    n_items = K * per
    bs, steps = 64, 250
    dim, hidden = [16, 24, 32][seed % 3], 64
    lo, hi = [(80, 200), (100, 250), (60, 180)][seed % 3]
    batches = []
    for _ in range(steps):
        uc = torch.randint(0, K, (bs,), generator=g)
        lens = torch.randint(lo, hi, (bs,), generator=g)
        hist = [c * per + torch.randint(0, per, (int(n),), generator=g)
                for c, n in zip(uc.tolist(), lens.tolist())]
        flat = torch.cat(hist)
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lens.cumsum(0)[:-1]])
        y = (torch.rand(bs, generator=g) < 0.5).float()
        other = (uc + torch.randint(1, K, (bs,), generator=g)) % K
        tc = torch.where(y.bool(), uc, other)
        target = tc * per + torch.randint(0, per, (bs,), generator=g)
        batches.append(((flat, offsets, target), y))

    torch.manual_seed(seed)
    model = CTRModel(n_items, dim, hidden, mode="mean" if fixed else "sum")
    opt = torch.optim.Adagrad(model.parameters(), lr=[0.1, 0.15, 0.2][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=F.binary_cross_entropy_with_logits,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
