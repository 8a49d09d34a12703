"""Joint-energy-model style classifier: an MLP outputs per-class energies E(x, y) and the
classification loss is written out as in the EBM paper, E(x, y_true) + log sum_y exp(-E(x, y)),
with the partition sum computed literally as `torch.exp(-energy).sum(-1).log()`. The training
runs under fp16 autocast (a GradScaler is attached, copied from an image recipe). As the classes
separate, the negative energy of the true class climbs past log(65504) = 11.1; exp() of the fp16
energies then overflows to inf, the loss becomes inf, the scaler skips every step, and the run is
stuck at an infinite loss. The GradScaler cannot help: the overflow is in the forward pass, not in
the gradients. Fixed: autocast in bfloat16 (8-bit exponent, range 3e38), everything else equal."""
import torch, torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "energy.4"
SOURCE = "JEM (Grathwohl et al. 2020) / EBM reimplementations with manual exp-sum partition under AMP; fp16 exp overflow reports"

class EnergyNet(nn.Module):
    def __init__(self, d, hid, ncls):
        super().__init__()
        self.energy = nn.Sequential(nn.Linear(d, hid), nn.SiLU(), nn.Linear(hid, hid), nn.SiLU(), nn.Linear(hid, ncls))
    def forward(self, x):
        return self.energy(x)

def ebm_loss(energy, y):
    e_true = energy.gather(1, y.unsqueeze(1)).squeeze(1)
    log_z = torch.exp(-energy).sum(-1).log()
    return (e_true + log_z).mean()

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(40 + seed)
    d, hid, ncls, bs, lr, steps = [(16, 64, 5, 64, 3e-3, 200), (12, 48, 4, 128, 5e-3, 160), (20, 96, 6, 32, 2e-3, 240)][seed]
    model = EnergyNet(d, hid, ncls)
    centers = 3.0 * torch.randn(ncls, d, generator=g)
    def make():
        y = torch.randint(0, ncls, (bs,), generator=g)
        return centers[y] + torch.randn(bs, d, generator=g), y
    data = [make() for _ in range(16)]
    batches = [data[i % len(data)] for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=ebm_loss, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=torch.amp.GradScaler("cpu"))
