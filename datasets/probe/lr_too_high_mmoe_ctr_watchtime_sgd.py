"""Multi-gate Mixture-of-Experts (MMoE) recommender with two tasks: model(dense, user_ids,
item_ids) returns a dict {"click": logit, "watch": log-watch-time} and loss_fn sums BCE on clicks
and 0.5 x MSE on standardised log watch time.  The plain-SGD learning rate (2.5-4) was carried
over from a DLRM-style large-batch recipe (which relies on a huge batch and a long warmup) to batch
128 with no warmup: every update overshoots, the towers' outputs oscillate with growing amplitude
and the loss diverges to inf/NaN within the first ~20 steps.
fixed=True: the same run with lr = 0.3.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("MMoE (Ma et al., KDD 2018) multi-task recommender; MLPerf/DLRM reference recipes use plain SGD "
          "with lr 15-24 at batch 32k-64k plus thousands of warmup steps; reports of multi-task CTR models "
          "diverging in the first steps when such an lr is reused at small batch (update/weight >> 1e-3)")

N_USERS, N_ITEMS, DENSE, EMB, N_EXPERTS, BATCH = 500, 800, 16, 16, 4, 128


class Expert(nn.Module):
    def __init__(self, d_in, d_out=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU(), nn.Linear(64, d_out), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class MMoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.user_emb = nn.Embedding(N_USERS, EMB)
        self.item_emb = nn.Embedding(N_ITEMS, EMB)
        d_in = DENSE + 2 * EMB
        self.experts = nn.ModuleList([Expert(d_in) for _ in range(N_EXPERTS)])
        self.gate_click = nn.Linear(d_in, N_EXPERTS)
        self.gate_watch = nn.Linear(d_in, N_EXPERTS)
        self.tower_click = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))
        self.tower_watch = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, dense, user_ids, item_ids):
        x = torch.cat([dense, self.user_emb(user_ids), self.item_emb(item_ids)], dim=-1)
        e = torch.stack([ex(x) for ex in self.experts], dim=1)              # B x E x 64
        mix_c = (F.softmax(self.gate_click(x), -1).unsqueeze(-1) * e).sum(1)
        mix_w = (F.softmax(self.gate_watch(x), -1).unsqueeze(-1) * e).sum(1)
        return {"click": self.tower_click(mix_c).squeeze(-1), "watch": self.tower_watch(mix_w).squeeze(-1)}


def _make_batches(g, steps):
    u_vec = torch.randn(N_USERS, 8, generator=g)
    i_vec = torch.randn(N_ITEMS, 8, generator=g)
    w_dense = torch.randn(DENSE, generator=g) / DENSE ** 0.5
    batches = []
    for _ in range(steps):
        u = torch.randint(0, N_USERS, (BATCH,), generator=g)
        it = torch.randint(0, N_ITEMS, (BATCH,), generator=g)
        dense = torch.randn(BATCH, DENSE, generator=g)
        affinity = (u_vec[u] * i_vec[it]).sum(-1) / 8 ** 0.5
        click = (torch.rand(BATCH, generator=g) < torch.sigmoid(affinity + 2.5 * (dense @ w_dense) - 0.5)).float()
        log_watch = 0.5 * affinity + 1.2 * torch.tanh(dense[:, 0] + dense[:, 1]) + 0.6 * dense[:, 2] * dense[:, 3] + 0.3 * torch.randn(BATCH, generator=g)
        watch = log_watch / 1.3                                  # ~standardised
        batches.append(((dense, u, it), {"click": click, "watch": watch}))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    steps = 250
    too_high = 2.5 + 1.5 * float(torch.rand(1, generator=g))
    lr = 0.3 if fixed else too_high
    batches = _make_batches(g, steps)
    torch.manual_seed(seed)
    model = MMoE()
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def loss_fn(out, y):
        return (F.binary_cross_entropy_with_logits(out["click"], y["click"])
                + 0.5 * F.mse_loss(out["watch"], y["watch"]))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
