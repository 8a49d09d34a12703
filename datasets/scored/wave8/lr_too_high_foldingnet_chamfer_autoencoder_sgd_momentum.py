"""FoldingNet-style point-cloud autoencoder: a PointNet encoder (shared conv1d MLP + max-pool) gives
a codeword, and a folding decoder maps a fixed 2-D grid concatenated with the codeword to 3-D
points; the loss is the symmetric Chamfer distance (squared). The optimiser is SGD with momentum
0.9 at lr=0.5, a learning rate taken from a classification recipe where gradients are O(1); the
Chamfer gradients on unit-scale clouds are of a similar size, so updates are far too large for the
folding MLP: update/weight ratios are ~1e-1 from the first steps, the folded surface overshoots,
the loss climbs by orders of magnitude within a few dozen steps and ends in inf/NaN. Fix: lr=0.01
(same optimiser, same momentum)."""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Yang et al. 2018 FoldingNet; point-cloud AE re-implementations reporting 'Chamfer loss "
          "explodes to NaN with SGD' resolved by lowering the learning rate / using Adam 1e-4")


class FoldingNet(nn.Module):
    def __init__(self, code=64, grid=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv1d(3, 32, 1), nn.ReLU(), nn.Conv1d(32, 64, 1), nn.ReLU(), nn.Conv1d(64, code, 1))
        u = torch.linspace(-1, 1, grid)
        gy, gx = torch.meshgrid(u, u, indexing="ij")
        self.register_buffer("grid", torch.stack([gx.reshape(-1), gy.reshape(-1)], 0))   # (2, G)
        self.fold1 = nn.Sequential(nn.Conv1d(code + 2, 64, 1), nn.ReLU(), nn.Conv1d(64, 3, 1))
        self.fold2 = nn.Sequential(nn.Conv1d(code + 3, 64, 1), nn.ReLU(), nn.Conv1d(64, 3, 1))

    def forward(self, pts):                               # (B, 3, N)
        cw = self.enc(pts).amax(-1, keepdim=True)         # (B, code, 1)
        G = self.grid.shape[1]
        cwg = cw.expand(-1, -1, G)
        p1 = self.fold1(torch.cat([cwg, self.grid.unsqueeze(0).expand(pts.shape[0], -1, -1)], 1))
        return self.fold2(torch.cat([cwg, p1], 1))         # (B, 3, G)


def chamfer(pred, gt):
    d = ((pred.unsqueeze(3) - gt.unsqueeze(2)) ** 2).sum(1)      # (B, G, N)
    return d.min(2).values.mean() + d.min(1).values.mean()


def _batch(g, n, N=96):
    out = []
    for _ in range(n):
        kind = int(torch.randint(0, 3, (1,), generator=g))
        u = torch.rand(N, 2, generator=g)
        if kind == 0:
            v = torch.randn(N, 3, generator=g); p = v / v.norm(dim=1, keepdim=True)
        elif kind == 1:
            th = u[:, 0] * 2 * math.pi
            p = torch.stack([torch.cos(th), torch.sin(th), u[:, 1] * 2 - 1], 1)
        else:
            p = torch.stack([u[:, 0] * 2 - 1, u[:, 1] * 2 - 1, 0.3 * torch.sin(3 * u[:, 0])], 1)
        out.append((p * (0.6 + 0.4 * torch.rand(1, generator=g))).T)
    x = torch.stack(out)
    return x, x


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = FoldingNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if fixed else 0.5, momentum=0.9)
    pool = [_batch(g, 16) for _ in range(10)]
    steps = 120
    batches = [pool[i % len(pool)] for i in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=chamfer, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
