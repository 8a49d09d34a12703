"""Stage one of a fine-tuning recipe for a watch-time regressor: a pretrained item-factor table
(non-negative NMF-style factors exported from the feature store, loaded into a frozen
nn.Embedding) plus min-max scaled context features feed a freshly initialised two-layer ReLU
head. The config keeps the habit of a `head_lr_mult` for new layers (Caffe `lr_mult`, "new layers
10-100x lr"), so the head's SGD (momentum 0.9) param group gets base_lr * 100 = 1.0. Because
every input of the head is non-negative, a few large steps that push a unit's weights and bias down
make its pre-activation negative for every possible input; within the first updates 80-100% of
the first ReLU layer is silent, the output collapses to (nearly) a constant that only the final
bias moves, and the loss stays at or above the target variance (in some seeds the last layers, the only
part still learning, overshoot as well and the loss grows); no NaN is produced.
Fixed: head_lr_mult = 1 (the head is trained at the base lr).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "head.0"
SOURCE = ("Caffe lr_mult / 'train new layers at 10-100x lr' fine-tuning recipes carried over to SGD "
          "param groups; CS231n notes: 'as much as 40% of your network can be dead' with too high a lr")

N_ITEMS, K, N_CTX = 300, 16, 8


class WatchTimeHead(nn.Module):
    def __init__(self, item_factors):
        super().__init__()
        self.item_factors = nn.Embedding.from_pretrained(item_factors, freeze=True)
        self.head = nn.Sequential(nn.Linear(K + N_CTX, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                                  nn.Linear(32, 1))

    def forward(self, item_id, ctx):
        return self.head(torch.cat([self.item_factors(item_id), ctx], -1)).squeeze(-1)


def loss_fn(out, y):
    return F.mse_loss(out, y)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    factors = torch.randn(N_ITEMS, K, generator=g).abs() * 0.5          # "pretrained" NMF factors >= 0
    model = WatchTimeHead(factors)
    w_item = torch.randn(K, generator=g)
    w_ctx = torch.randn(N_CTX, generator=g)
    steps, bs = 150, 64
    batches = []
    raw = []
    for _ in range(steps):
        item = torch.randint(0, N_ITEMS, (bs,), generator=g)
        ctx = torch.rand(bs, N_CTX, generator=g)                         # min-max scaled context
        t = factors[item] @ w_item + 2.0 * torch.tanh(ctx @ w_ctx - 0.5 * w_ctx.sum()) \
            + 0.2 * torch.randn(bs, generator=g)
        raw.append((item, ctx, t))
    allt = torch.cat([r[2] for r in raw])
    mu, sd = allt.mean(), allt.std()
    for item, ctx, t in raw:
        batches.append(((item, ctx), (t - mu) / sd))                     # standardised target
    base_lr = 1e-2
    head_lr_mult = 1.0 if fixed else 100.0
    opt = torch.optim.SGD([{"params": model.head.parameters(), "lr": base_lr * head_lr_mult}], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
