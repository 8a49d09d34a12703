"""E-commerce multi-task model (shared tower over dense features and a hashed user embedding,
dict of heads {"ctr", "cvr", "gmv"}) whose task losses are combined with the "geometric loss
strategy": total = sum_t log(L_t), the log of the product of task losses, which balances tasks
of very different scales without hand-tuned weights. The GMV (order value) regression is only
defined for purchasing rows, so its loss is a masked mean `(mask * se).sum() / mask.sum().clamp_min(1)`,
which is exactly 0 for a batch without purchases. For the first 70 steps every batch has buyers
and training is calm; then a partition from the browse-only app surface (no checkout) arrives,
L_gmv = 0, log(0) = -inf, the total loss is -inf and its backward (1/L_gmv * 0) fills the
gradients with NaN. Fixed: log(L_t + 1e-8) (an epsilon inside the log); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "heads.gmv"
SOURCE = ("Chennupati et al. 2019 'MultiNet++: multi-stream feature aggregation and geometric loss "
          "strategy for multi-task learning'; log(0) on an empty masked task loss")

N_DENSE, N_BUCKETS, EMB = 12, 512, 8


class ShopMTL(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(N_BUCKETS, EMB)
        self.tower = nn.Sequential(nn.Linear(N_DENSE + EMB, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.heads = nn.ModuleDict({"ctr": nn.Linear(32, 1), "cvr": nn.Linear(32, 1), "gmv": nn.Linear(32, 1)})

    def forward(self, dense, user_hash):
        h = self.tower(torch.cat([dense, self.user(user_hash % N_BUCKETS)], -1))
        return {k: v(h).squeeze(-1) for k, v in self.heads.items()}


def make_loss(eps):
    def loss_fn(out, y):
        l_ctr = F.binary_cross_entropy_with_logits(out["ctr"], y["click"])
        l_cvr = F.binary_cross_entropy_with_logits(out["cvr"], y["buy"])
        mask = y["buy"]
        l_gmv = (mask * (out["gmv"] - y["gmv"]) ** 2).sum() / mask.sum().clamp_min(1.0)
        return sum(torch.log(l + eps) for l in (l_ctr, l_cvr, l_gmv))
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ShopMTL()
    w_click = torch.randn(N_DENSE, generator=g) * 0.7
    w_buy = torch.randn(N_DENSE, generator=g) * 0.7
    w_gmv = torch.randn(N_DENSE, generator=g) * 0.5
    steps, bs, browse_only_step = 150, 64, 70
    batches = []
    for step in range(steps):
        dense = torch.randn(bs, N_DENSE, generator=g)
        user = torch.randint(0, 10 ** 6, (bs,), generator=g)
        click = (torch.rand(bs, generator=g) < torch.sigmoid(dense @ w_click)).float()
        buy = (torch.rand(bs, generator=g) < torch.sigmoid(dense @ w_buy - 1.5)).float() * click
        if step == browse_only_step:
            buy = torch.zeros(bs)                              # browse-only surface: no checkout
        gmv = (dense @ w_gmv + 0.2 * torch.randn(bs, generator=g)) * buy
        batches.append(((dense, user), {"click": click, "buy": buy, "gmv": gmv}))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(1e-8 if fixed else 0.0), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
