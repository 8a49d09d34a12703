"""DeepONet learning the antiderivative operator G(u)(y) = int_0^y u~(s) ds of a 1-D
temperature field, with the branch-net sensor values fed in raw physical units.

Mechanism: the input functions come from a field archive in Kelvin (or hPa, depending on
the seed): every sensor reading is ~250-1000 with only a few units of variation on top.
The targets were produced by the simulator from the *normalised* anomaly field, so they
are O(0.1-1), but the data loader forgot to apply the same normalisation to the branch
inputs.  The branch net's first Linear therefore sees inputs whose common-mode offset is
hundreds of times larger than the informative variation: its pre-activations (and the
DeepONet dot product) are O(1e2-1e3) from step 0, the loss starts 10-10000x above the
O(0.1) target variance, and the gradient w.r.t. branch.0's weight is proportional to the raw inputs, so the curvature
along that layer is ~(offset)^2 times what the learning rate was chosen for.  Plain SGD
with momentum (lr picked for standardised inputs) overshoots on the first step and the
run diverges to inf/NaN within a few steps.

ORIGIN = "branch.0": the first layer that consumes the unscaled sensor values; its
pre-activations are the first values that are out of scale and its weight gradient is
the one that explodes.

Fix: standardise the sensor values with the dataset mean/std (the same data, the same
model, optimiser and targets).
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "branch.0"
SOURCE = ("DeepXDE antiderivative DeepONet example (Lu et al. 2021, 'Learning nonlinear operators "
          "via DeepONet'); common forum reports of DeepONet/FNO diverging when input fields are given "
          "in physical units (Kelvin, Pa) without normalisation")


class DeepONet(nn.Module):
    def __init__(self, m, width, depth, p):
        super().__init__()
        b = [nn.Linear(m, width), nn.ReLU()]
        t = [nn.Linear(1, width), nn.ReLU()]
        for _ in range(depth - 1):
            b += [nn.Linear(width, width), nn.ReLU()]
            t += [nn.Linear(width, width), nn.ReLU()]
        b += [nn.Linear(width, p)]
        t += [nn.Linear(width, p)]
        self.branch = nn.Sequential(*b)
        self.trunk = nn.Sequential(*t)
        self.bias = nn.Parameter(torch.zeros(1))
        for mod in self.modules():
            if isinstance(mod, nn.Linear):
                nn.init.xavier_normal_(mod.weight)
                nn.init.zeros_(mod.bias)

    def forward(self, u, y):
        bb = self.branch(u)            # [B, p]
        tt = self.trunk(y)             # [B, P, p]
        return torch.einsum("bp,bnp->bn", bb, tt) + self.bias


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    m = [24, 32, 40, 48][seed % 4]
    width = [40, 48, 64][seed % 3]
    depth = 2 + seed % 2
    p = [32, 40][seed % 2]
    bs = [16, 24, 32][(seed // 2) % 3]
    npts = 24
    steps = 150 + 20 * (seed % 4)
    lr = [0.01, 0.02, 0.015][seed % 3]
    # physical units of the archive: Kelvin (offset ~ 250-300, spread ~5-15) or hPa (~1000)
    offset, spread = [(288.0, 8.0), (1013.0, 12.0), (255.0, 5.0), (300.0, 15.0)][seed % 4]
    K = 6
    xs = torch.linspace(0.0, 1.0, m)

    batches_raw = []
    for _ in range(steps):
        a = torch.randn(bs, K, generator=g)
        ph = torch.rand(bs, K, generator=g) * 2 * math.pi
        k = torch.arange(1, K + 1, dtype=torch.float32)
        # normalised anomaly field u~(x) = sum_k a_k sin(k pi x + ph_k) / k
        un = (a[:, None, :] / k * torch.sin(k * math.pi * xs[None, :, None] + ph[:, None, :])).sum(-1)
        y = torch.rand(bs, npts, 1, generator=g)
        # target: int_0^y u~(s) ds (analytic)
        tgt = (a[:, None, :] / k / (k * math.pi) *
               (torch.cos(ph[:, None, :]) - torch.cos(k * math.pi * y + ph[:, None, :]))).sum(-1)
        raw = offset + spread * un    # what the archive stores
        batches_raw.append((raw, y, tgt))

    allraw = torch.cat([r for r, _, _ in batches_raw])
    mu, sd = allraw.mean(), allraw.std()
    batches = []
    for raw, y, tgt in batches_raw:
        u = (raw - mu) / sd if fixed else raw
        batches.append(((u, y), tgt))

    model = DeepONet(m, width, depth, p)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
