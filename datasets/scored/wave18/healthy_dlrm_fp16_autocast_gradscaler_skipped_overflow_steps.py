"""Healthy DLRM trained under fp16 autocast with a GradScaler that skips early steps.

What looks alarming: the run uses float16 autocast (the bottom/top MLPs and the batched dot
interaction run in half) with a GradScaler started at a high scale (2**24, taken from a
recipe that fought gradient underflow).  The first backward passes overflow to inf in half,
the scaler skips those optimizer steps and halves its scale each time, so 3-4 of the first 5
steps are no-ops, and inf gradients keep appearing every 20-40 steps for the whole run when
the scale grows back (growth_interval=25: the scaler doubles and overflows again).
Gradient norms seen before unscaling are astronomically large.

Why it is healthy: skipped steps are the GradScaler working as designed; the scale settles,
the weights never see a non-finite value, and the click loss decreases steadily once steps
are taken.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("DLRM (Naumov et al. 2019) with torch.amp autocast + GradScaler; the documented "
          "GradScaler behaviour of skipping steps with inf/NaN gradients while calibrating "
          "its scale (PyTorch AMP docs).")


class DLRM(nn.Module):
    def __init__(self, n_dense, cards, d, bot, top):
        super().__init__()
        layers, dim = [], n_dense
        for h in bot + [d]:
            layers += [nn.Linear(dim, h), nn.ReLU()]
            dim = h
        self.bottom = nn.Sequential(*layers)
        self.tables = nn.ModuleList([nn.EmbeddingBag(c, d, mode="sum") for c in cards])
        for t in self.tables:
            bound = (1.0 / t.num_embeddings) ** 0.5
            nn.init.uniform_(t.weight, -bound, bound)
        n_vec = len(cards) + 1
        self.register_buffer("li", torch.tril_indices(n_vec, n_vec, offset=-1))
        layers, dim = [], d + n_vec * (n_vec - 1) // 2
        for h in top:
            layers += [nn.Linear(dim, h), nn.ReLU()]
            dim = h
        layers.append(nn.Linear(dim, 1))
        self.top = nn.Sequential(*layers)

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        ys = [t(sparse[:, j:j + 1]) for j, t in enumerate(self.tables)]
        z = torch.stack([x.to(ys[0].dtype)] + ys, 1)
        inter = torch.bmm(z, z.transpose(1, 2))[:, self.li[0], self.li[1]]
        return self.top(torch.cat([x, inter.to(x.dtype)], 1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2300 + seed)
    n_dense = [13, 8, 10][seed]
    cards = [[50, 30, 20, 40, 10], [60, 25, 15, 35], [40, 40, 20, 30, 10, 15]][seed]
    d = [16, 32, 16][seed]
    bot = [[64], [128, 64], [64, 32]][seed]
    top = [[64, 32], [128, 64], [96]][seed]
    bs = [256, 128, 512][seed]
    steps = [150, 160, 140][seed]
    lr = [3e-3, 2e-3, 4e-3][seed]

    n = bs * steps
    dense = torch.log1p(torch.poisson(torch.rand(n, n_dense, generator=g) * 20, generator=g))
    dense = (dense - dense.mean(0)) / dense.std(0)
    sparse = torch.stack([torch.randint(0, c, (n,), generator=g) for c in cards], 1)
    effs = [torch.randn(c, generator=g) for c in cards]
    s = sum(e[sparse[:, j]] for j, e in enumerate(effs)) / len(cards) ** 0.5
    s = s + dense[:, :3] @ torch.tensor([0.8, -0.5, 0.4]) + 0.5 * effs[0][sparse[:, 0]] * dense[:, 0]
    s = s - s.median()
    y = (torch.rand(n, generator=g) < torch.sigmoid(3.0 * s)).float()
    batches = [((dense[i * bs:(i + 1) * bs], sparse[i * bs:(i + 1) * bs]), y[i * bs:(i + 1) * bs])
               for i in range(steps)]

    model = DLRM(n_dense, cards, d, bot, top)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=25)
    loss_fn = nn.BCEWithLogitsLoss()
    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
