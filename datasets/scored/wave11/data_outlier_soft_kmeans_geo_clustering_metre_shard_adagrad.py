"""Differentiable (soft) k-means clustering delivery addresses into 8 depots: centroids are parameters,
assignments are softmax(-||x - c_k||^2 / T) and the loss is the expected squared distance, optimised
with Adagrad. Coordinates are kilometres east/north of the city centre, but one shard early in the
stream (the batch at step 3) came from a partner export in metres. That single batch has a loss of
~3e7 and sends gradients of order 1e2-2e3 (vs ~1 normally) into the centroids it reaches (5 of the 8
in seed 0); Adagrad adds their squares to its never-decaying accumulators, so from then on those
centroids' effective step size is ~100-2000x smaller, and the remaining centroids are the ones that
own almost no points and get almost no gradient anyway. Nothing is NaN and the loss looks normal
again right after the spike, but the centroids stay frozen near their initial position and the
clustering cost never comes down. The fixed run feeds the same shard converted to kilometres.
"""
import torch
import torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "assign"
SOURCE = ("mixed-unit shard (metres vs km) in a location clustering pipeline; Adagrad accumulator "
          "poisoning by one huge-gradient batch (Duchi et al. 2011 accumulator never decays)")

K, T = 8, 2.0


class SoftAssign(nn.Module):
    def __init__(self):
        super().__init__()
        self.centroids = nn.Parameter(0.5 * torch.randn(K, 2))

    def forward(self, x):
        d2 = ((x.unsqueeze(1) - self.centroids.unsqueeze(0)) ** 2).sum(-1)   # (B, K)
        r = torch.softmax(-d2 / T, dim=-1)
        return r, d2


class SoftKMeans(nn.Module):
    def __init__(self):
        super().__init__()
        self.assign = SoftAssign()

    def forward(self, x):
        return self.assign(x)


def loss_fn(out, y):
    r, d2 = out
    return (r * d2).sum(-1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    ang = torch.arange(K) * (2 * torch.pi / K) + 0.3 * torch.rand(K, generator=g)
    rad = 5.0 + 2.0 * torch.rand(K, generator=g)
    depots = torch.stack([rad * torch.cos(ang), rad * torch.sin(ang)], -1)
    model = SoftKMeans()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.5)
    steps, B, bad_step = 150, 128, 3
    batches = []
    for step in range(steps):
        z = torch.randint(0, K, (B,), generator=g)
        x = depots[z] + 0.8 * torch.randn(B, 2, generator=g)   # km
        if step == bad_step and not fixed:
            x = x * 1000.0                                       # shard exported in metres
        batches.append((x, torch.zeros(B)))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
