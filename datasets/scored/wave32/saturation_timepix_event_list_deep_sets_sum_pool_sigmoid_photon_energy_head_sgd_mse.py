"""Photon-energy monitor on event-mode (Timepix-style) X-ray detector data: each frame is a
variable-length list of photon hits (x, y, time-over-threshold). A Deep Sets model encodes each
hit with a ReLU MLP phi, SUM-pools over the frame's hits and maps the pooled vector through
rho = Linear -> ReLU -> Linear -> Sigmoid to the monochromator energy normalised to (0, 1)
(MSE, SGD with momentum).

Mechanism: a frame holds 150-600 hits and phi's outputs are non-negative, so the pooled sum is
hundreds of times one hit's encoding; rho's last Linear therefore produces logits of magnitude
~1e1-1e2 with the same sign for every frame; the first few updates push them further out. The
output sigmoid then sits at (numerically) 0 or 1 for all frames, sigmoid'(z) ~ e^-|z| ~ 0 stops
every gradient, and no parameter moves again: the loss stays at the all-0/all-1 prediction's
error for the rest of the run.

ORIGIN: "rho.3", the output Sigmoid that saturates (the sum-pooled scale is what drives it).
Fix: mean-pool instead of sum-pool (divide the pooled vector by the hit count), keeping the
sigmoid's input O(1); model, data and optimiser otherwise identical.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "rho.3"
SOURCE = ("Zaheer et al. 2017 Deep Sets (sum pooling scales with set size); LeCun et al. "
          "'Efficient BackProp' (saturated sigmoid outputs stop learning); event-mode "
          "Timepix X-ray detectors")

N_MAX = 600


class EventDeepSets(nn.Module):
    def __init__(self, d, mean_pool):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(3, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 1), nn.Sigmoid())
        self.mean_pool = mean_pool

    def forward(self, hits, mask):
        e = self.phi(hits) * mask[..., None]
        pooled = e.sum(1)
        if self.mean_pool:
            pooled = pooled / mask.sum(1, keepdim=True)
        return self.rho(pooled).squeeze(-1)


def _frames(g, bs):
    hits = torch.zeros(bs, N_MAX, 3)
    mask = torch.zeros(bs, N_MAX)
    energy = 0.05 + 0.9 * torch.rand(bs, generator=g)       # normalised monochromator energy
    for b in range(bs):
        n = int(torch.randint(150, N_MAX + 1, (1,), generator=g))
        xy = torch.randn(n, 2, generator=g) * 0.5
        tot = 2.0 * energy[b] - 1.0 + 0.3 * torch.randn(n, 1, generator=g)
        hits[b, :n] = torch.cat([xy, tot], 1)
        mask[b, :n] = 1
    return (hits, mask), energy


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1200 + seed)
    d = [32, 64, 48][seed % 3]
    bs = [16, 12, 20][seed % 3]
    lr = [0.05, 0.1, 0.08][seed % 3]
    steps = 100
    model = EventDeepSets(d, mean_pool=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_frames(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
