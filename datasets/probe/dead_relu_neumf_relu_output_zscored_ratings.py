"""NeuMF-style recommender (He et al. 2017): GMF branch + MLP tower over user/item embeddings, fused by
a custom nn.Module that owns its fusion weights/bias and calls both child branches, followed by a ReLU
output "so predicted ratings are non-negative". The ratings were z-scored in the pipeline, so half the
targets are negative: Adam drives the fused pre-activation below 0 for every (user, item) pair, the
output ReLU dies (zero gradient everywhere) and the loss plateaus at ~E[r^2] = 1.
fixed=True: LeakyReLU(0.1) as the output activation instead of ReLU; nothing else changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = ("NeuMF / NCF (He et al. 2017) rating regression; the recurring 'regression net always predicts 0' "
          "report caused by a final ReLU on (standardised) targets -- the dying-ReLU pattern (Lu et al. 2019)")

NU, NI, E = 200, 150, 16


class Tower(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        act = nn.ReLU
        self.net = nn.Sequential(nn.Linear(2 * E, 64), act(), nn.Linear(64, 32), act(),
                                 nn.Linear(32, 16), act(), nn.Linear(16, 8), act())

    def forward(self, x):
        return self.net(x)


class NeuMF(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.user_mlp = nn.Embedding(NU, E)
        self.item_mlp = nn.Embedding(NI, E)
        self.user_gmf = nn.Embedding(NU, 4)
        self.item_gmf = nn.Embedding(NI, 4)
        for e in (self.user_mlp, self.item_mlp, self.user_gmf, self.item_gmf):
            nn.init.normal_(e.weight, std=0.1)
        self.mlp_tower = Tower(fixed)
        # fusion layer owned directly by this module
        self.w_fuse = nn.Parameter(torch.randn(8 + 4) * 0.1)
        self.b_fuse = nn.Parameter(torch.zeros(()))
        self.out_act = nn.LeakyReLU(0.1) if fixed else nn.ReLU()

    def forward(self, u, i):
        h_mlp = self.mlp_tower(torch.cat([self.user_mlp(u), self.item_mlp(i)], dim=-1))
        h_gmf = self.user_gmf(u) * self.item_gmf(i)
        return self.out_act(torch.cat([h_mlp, h_gmf], dim=-1) @ self.w_fuse + self.b_fuse)


def make_batches(seed, steps, B=128):
    g = torch.Generator().manual_seed(seed)
    U = torch.randn(NU, 3, generator=g)
    It = torch.randn(NI, 3, generator=g)
    ub = 0.5 * torch.randn(NU, generator=g)
    ib = 0.5 * torch.randn(NI, generator=g)
    batches = []
    for _ in range(steps):
        u = torch.randint(0, NU, (B,), generator=g)
        i = torch.randint(0, NI, (B,), generator=g)
        r = 3.2 + ub[u] + ib[i] + 0.6 * (U[u] * It[i]).sum(-1) + 0.3 * torch.randn(B, generator=g)
        r = r.clamp(1, 5)
        batches.append(((u, i), (r - 3.2) / 1.1))   # z-scored ratings
    return batches


def loss_fn(out, r):
    return F.mse_loss(out, r)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = NeuMF(fixed)
    steps = 300
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=make_batches(seed, steps),
                steps=steps, amp_dtype=None, scaler=None)
