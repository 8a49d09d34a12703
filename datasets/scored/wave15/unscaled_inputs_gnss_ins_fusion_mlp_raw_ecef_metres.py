"""GNSS/INS fusion correction network: an MLP that fuses a GNSS fix, IMU-integrated dead
reckoning and velocity into a position-correction estimate (residual of the INS solution
w.r.t. RTK ground truth), trained with SGD + momentum on MSE.

Mechanism: the GNSS and INS positions are fed as raw ECEF coordinates in metres
(|x| ~ 4e6..6.4e6 m) next to velocities of a few m/s; no standardisation.  The first Linear
produces pre-activations ~1e6, the outputs are ~1e5 and the loss ~1e10-1e11 from step 0, the
gradients w.r.t. the first layer are proportional to the 1e6-scale inputs, and the first SGD
steps blow the weights up until the loss overflows to inf/NaN.

ORIGIN: ``net.0`` -- the first Linear is the layer that receives the unscaled ECEF inputs.
Fix: inputs standardised with dataset mean/std (fixed=True); same model, lr, data.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "net.0"
SOURCE = ("Learned GNSS/INS integration papers and KITTI/UrbanNav fusion baselines; common "
          "'loss is 1e12 then nan' posts from feeding raw ECEF metres into an MLP.")


class FusionMLP(nn.Module):
    def __init__(self, h, depth):
        super().__init__()
        layers, d = [], 9                       # gnss xyz, ins xyz, velocity xyz
        for _ in range(depth):
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        layers.append(nn.Linear(d, 3))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(h=64, depth=2, lr=1e-2, bs=64, steps=100),
           dict(h=128, depth=3, lr=5e-3, bs=32, steps=100),
           dict(h=48, depth=2, lr=2e-2, bs=128, steps=120)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 51)
    model = FusionMLP(cfg["h"], cfg["depth"])
    ref = torch.tensor([4_027_894.0, 307_045.0, 4_919_474.0])      # ECEF of the test area (m)
    raw = []
    for _ in range(cfg["steps"]):
        truth = ref + torch.randn(cfg["bs"], 3, generator=g) * 500.0
        vel = torch.randn(cfg["bs"], 3, generator=g) * 5.0
        drift = 0.3 * vel + torch.randn(cfg["bs"], 3, generator=g) * 0.5
        gnss = truth + torch.randn(cfg["bs"], 3, generator=g) * 2.0
        ins = truth + drift
        x = torch.cat([gnss, ins, vel], -1)
        y = ins - truth                                               # correction target (m), O(1)
        raw.append((x, y))
    if fixed:
        allx = torch.cat([x for x, _ in raw])
        mu, sd = allx.mean(0), allx.std(0)
        raw = [((x - mu) / sd, y) for x, y in raw]
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=raw, steps=cfg["steps"])
