"""Hypernetwork for a family of damped oscillators: the task descriptor (amplitude, damping,
frequency, phase; all non-negative physical parameters) goes through a narrow ReLU task
embedding (`hyper.0`, 4-6 units) and a linear head that emits all weights of a small tanh
target network mapping time t to displacement y(t). The task descriptors are non-negative, so
one full-size Adam step at lr 0.08-0.12 moves every embedding unit's weights and bias in the same
direction; for the units whose gradient says "smaller" the pre-activation becomes negative for
every task. With so few units, all of them die within a few steps: the generated target network
is then the same for every task, it can only predict the task-averaged curve (about zero, the
phases are uniform), and the loss plateaus at the signal power with zero gradient into
`hyper.0` - no NaN, just a stall. The fixed run only lowers the learning rate."""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "hyper.0"
SOURCE = ("HyperNetworks (Ha et al. 2017) / task-conditioned hypernetworks (von Oswald et al. "
          "2020); dying-ReLU in narrow embedding layers after large Adam steps (Lu et al. 2019, "
          "'Dying ReLU and initialization')")


class HyperOscillator(nn.Module):
    def __init__(self, d_task, emb, hidden):
        super().__init__()
        self.hidden = hidden
        n_params = hidden + hidden + hidden + 1
        self.hyper = nn.Sequential(nn.Linear(d_task, emb), nn.ReLU(), nn.Linear(emb, n_params))
        with torch.no_grad():   # generated read-out weights start near zero (y_hat(t) ~ 0)
            self.hyper[2].weight[2 * hidden:].mul_(0.05)
            self.hyper[2].bias[2 * hidden:].mul_(0.05)

    def forward(self, task, t):
        p = self.hyper(task)                                    # B, P
        H = self.hidden
        w1, b1, w2, b2 = p[:, :H], p[:, H:2 * H], p[:, 2 * H:3 * H], p[:, 3 * H:]
        h = torch.tanh(t.unsqueeze(-1) * w1.unsqueeze(1) + b1.unsqueeze(1))   # B, T, H
        return (h * w2.unsqueeze(1)).sum(-1) + b2               # B, T


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(70 + seed)
    emb = [4, 5, 6][seed % 3]
    hidden = [16, 24, 16][seed % 3]
    batch = [32, 64, 48][seed % 3]
    steps = [300, 260, 280][seed % 3]
    lr = 3e-3 if fixed else [0.1, 0.08, 0.12][seed % 3]
    T = 32
    t = torch.linspace(0, 4, T)

    batches = []
    for _ in range(steps):
        A = 0.5 + 1.5 * torch.rand(batch, generator=g)
        gam = 0.5 * torch.rand(batch, generator=g)
        om = 1.0 + 2.0 * torch.rand(batch, generator=g)
        ph = math.pi * 2 * torch.rand(batch, generator=g)
        y = A[:, None] * torch.exp(-gam[:, None] * t) * torch.sin(om[:, None] * t + ph[:, None])
        task = torch.stack([A, gam, om, ph / (2 * math.pi)], 1)
        batches.append(((task, t.expand(batch, T)), y))

    model = HyperOscillator(4, emb, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(out, y):
        return ((out - y) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
