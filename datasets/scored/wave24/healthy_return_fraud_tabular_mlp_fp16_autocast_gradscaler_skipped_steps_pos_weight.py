"""Healthy: return-fraud classifier for an online retailer (returned item != shipped item,
serial returners, empty-box claims): categorical embeddings (payment method, product
category, carrier, return reason) + standardised numeric features (order value, days to
return, account age, past return rate ...) -> MLP -> logit; BCE-with-logits with
pos_weight for the ~8% fraud rate; Adam under torch.autocast(float16) WITH a working
GradScaler.

Why a naive monitor might flag it: the scaler starts at a deliberately high scale (2**24) and
grows it again every 25 clean steps, so the float16 backward overflows several times during
the run: on those steps the gradients are inf, GradScaler.step() skips the update (the
parameters do not change at all, an exactly-zero step) and halves the scale. The pos_weight
makes losses on batches with more frauds jump visibly. None of this is a fault: every inf
gradient is caught by the scaler, the recorded loss is always finite, and the classifier
learns.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP recipe: GradScaler skips steps with inf/NaN gradients and backs off the "
          "scale (torch.amp docs, 'Gradient Scaling'); retail return-fraud / returns-abuse "
          "classifiers with pos_weight for class imbalance")

CARD = [6, 40, 5, 9]          # payment method, category, carrier, return reason


class ReturnFraudNet(nn.Module):
    def __init__(self, n_num, emb, hid, depth):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(c, emb) for c in CARD])
        layers, f = [], n_num + emb * len(CARD)
        for _ in range(depth):
            layers += [nn.Linear(f, hid), nn.ReLU()]
            f = hid
        layers.append(nn.Linear(f, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, cats, num):
        e = [m(cats[:, i]) for i, m in enumerate(self.embs)]
        return self.mlp(torch.cat(e + [num], 1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_num, steps = 8, 160
    emb = [4, 8, 6][seed % 3]
    hid = [64, 128, 96][seed % 3]
    depth = 2 + seed % 2
    bs = [256, 128, 192][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    torch.manual_seed(seed)
    model = ReturnFraudNet(n_num, emb, hid, depth)
    cat_risk = [torch.randn(c, generator=g) for c in CARD]
    w = torch.randn(n_num, generator=g) * 0.7
    batches = []
    for _ in range(steps):
        cats = torch.stack([torch.randint(0, c, (bs,), generator=g) for c in CARD], 1)
        num = torch.randn(bs, n_num, generator=g)
        z = -3.2 + num @ w + sum(cat_risk[i][cats[:, i]] for i in range(len(CARD)))
        z = z + 1.5 * (num[:, 0] > 1).float() * (num[:, 1] > 0.5).float()
        y = (torch.rand(bs, generator=g) < torch.sigmoid(z)).float()
        batches.append(((cats, num), y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=25)
    return dict(model=model, optimizer=opt,
                loss_fn=nn.BCEWithLogitsLoss(pos_weight=torch.tensor(6.0)),
                batches=batches, steps=steps, amp_dtype=torch.float16, scaler=scaler)
