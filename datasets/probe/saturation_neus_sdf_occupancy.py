"""Neural SDF (IDR/NeuS-style Softplus(beta=100) MLP with geometric circle init) fitted to a 2-D
silhouette from mask supervision: occupancy = sigmoid(-s * sdf(x)), with NeuS's learnable sharpness
s = exp(10 * variance) clipped to [1e-6, 1e6].  The config ports variance init 3.0 from a codebase that
parameterises s = exp(variance) (NeuS uses 0.3), so s starts at the 1e6 clip: |s*sdf| is in the
hundreds at every pixel, the logistic is saturated to exactly 0/1, the clipped-BCE mask loss passes
exactly zero gradient, and neither the SDF nor s can move: the loss stays flat for the whole run.
fixed=True: variance init 0.3 (s = 20), everything else identical."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "to_occupancy"
SOURCE = ("NeuS (Wang et al. 2021) SingleVarianceNetwork: s = exp(10*variance) clipped to 1e6, init_val 0.3, "
          "mask loss = BCE(weights_sum.clip(1e-3, 1-1e-3)); instant-nsr-pl / sdfstudio reports of training "
          "stuck when inv_s starts too large (sharp logistic saturates, no gradient); SoftRas sharpness sigma")

HIDDEN, RES, NPIX = 64, 32, 512


class SDFNet(nn.Module):
    def __init__(self, radius=0.5):
        super().__init__()
        self.l0 = nn.Linear(2, HIDDEN)
        self.l1 = nn.Linear(HIDDEN, HIDDEN)
        self.l2 = nn.Linear(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, 1)
        self.act = nn.Softplus(beta=100)
        for lin in (self.l0, self.l1, self.l2):  # IDR geometric init
            nn.init.normal_(lin.weight, 0.0, math.sqrt(2) / math.sqrt(HIDDEN))
            nn.init.zeros_(lin.bias)
        nn.init.normal_(self.out.weight, math.sqrt(math.pi) / math.sqrt(HIDDEN), 1e-4)
        nn.init.constant_(self.out.bias, -radius)

    def forward(self, x):
        h = self.act(self.l0(x))
        h = self.act(self.l1(h))
        h = self.act(self.l2(h))
        return self.out(h).squeeze(-1)


class LogisticOccupancy(nn.Module):
    """NeuS SingleVarianceNetwork + logistic CDF: occupancy = sigmoid(-s * sdf), s = exp(10 * variance)."""

    def __init__(self, init_val):
        super().__init__()
        self.variance = nn.Parameter(torch.tensor(float(init_val)))

    def forward(self, sdf):
        s = torch.exp(self.variance * 10.0).clip(1e-6, 1e6)   # as in NeuS / instant-nsr-pl
        return torch.sigmoid(-s * sdf)


class NeuralSDFSilhouette(nn.Module):
    def __init__(self, init_val):
        super().__init__()
        self.sdf = SDFNet()
        self.to_occupancy = LogisticOccupancy(init_val)

    def forward(self, pts):
        return self.to_occupancy(self.sdf(pts))


def mask_loss(occ, mask):  # NeuS mask loss: BCE on the clipped accumulated opacity
    return F.binary_cross_entropy(occ.clip(1e-3, 1.0 - 1e-3), mask)


def _shape(gen):
    """Union of two random ellipses inside [-1, 1]^2 (a 2-D silhouette)."""
    c = (torch.rand(2, 2, generator=gen) - 0.5) * 0.8
    ax = 0.25 + 0.35 * torch.rand(2, 2, generator=gen)
    th = math.pi * torch.rand(2, generator=gen)

    def inside(p):
        occ = torch.zeros(p.shape[0], dtype=torch.bool)
        for i in range(2):
            d = p - c[i]
            ct, st = math.cos(th[i]), math.sin(th[i])
            u, v = d[:, 0] * ct + d[:, 1] * st, -d[:, 0] * st + d[:, 1] * ct
            occ |= (u / ax[i, 0]) ** 2 + (v / ax[i, 1]) ** 2 <= 1.0
        return occ.float()
    return inside


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = NeuralSDFSilhouette(init_val=0.3 if fixed else 3.0)
    gen = torch.Generator().manual_seed(seed)
    inside = _shape(gen)
    # the supervision is one RES x RES mask image; each step samples a batch of its pixels (like rays)
    c = (torch.arange(RES, dtype=torch.float32) + 0.5) / RES * 2 - 1
    pix = torch.stack(torch.meshgrid(c, c, indexing="xy"), dim=-1).reshape(-1, 2)
    mask = inside(pix)
    steps = 300
    batches = []
    for _ in range(steps):
        idx = torch.randperm(pix.shape[0], generator=gen)[:NPIX]
        batches.append((pix[idx], mask[idx]))
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=mask_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
