"""Path-integration RNN (Cueva & Wei 2018; Banino et al. 2018 style): a GRU receives the
animal's 2-D velocity at each time step and reports its position in the arena; the loss is the
mean Euclidean position error in the arena's units (the metric the lab reports), computed as
sqrt(sum((p_hat - p)^2)) over valid time steps.

Mechanism: trials have different lengths (the animal reaches the reward at different times);
the batch is zero-padded, the predictions are masked (p_hat * mask) and the targets are zero at
padded steps. For most of the run all trials in a batch are full length and training is calm.
From one step on (varying with the seed) the sessions with early rewards enter and batches
contain padded steps. There both p_hat and p are exactly 0, the squared distance is exactly
0, and the backward of sqrt at 0 is 0.5 / sqrt(0) = inf; multiplied by the zero mask it becomes
0 * inf = NaN, every GRU gradient is NaN, and from the next step on the loss is NaN.

ORIGIN = "readout": the position readout nn.Linear whose (masked) output enters the sqrt; its
weight gradients are the first to be NaN.

Fix: an epsilon inside the sqrt (sqrt(d2 + 1e-8)). Same model, data, optimiser and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "readout"
SOURCE = ("Cueva & Wei 2018 'Emergence of grid-like representations by training recurrent neural "
          "networks to perform spatial localization'; the known NaN gradient of torch.sqrt / "
          "torch.norm at exactly zero (PyTorch issues on norm backward at 0) with padded sequences")


class PathIntegrator(nn.Module):
    def __init__(self, hid):
        super().__init__()
        self.encoder = nn.Linear(3, hid)
        self.gru = nn.GRU(hid, hid, batch_first=True)
        self.readout = nn.Linear(hid, 2)

    def forward(self, vel, mask):
        h, _ = self.gru(torch.tanh(self.encoder(vel)))
        return self.readout(h) * mask.unsqueeze(-1)


def make_loss(eps):
    def loss_fn(pred, target):
        pos, mask = target
        d2 = ((pred - pos) ** 2).sum(-1)
        dist = torch.sqrt(d2 + eps) if eps > 0 else torch.sqrt(d2)
        return (dist * mask).sum() / mask.sum()
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(17000 + seed)
    hid = [64, 48, 96][seed % 3]
    bs = [32, 24, 48][seed % 3]
    lr = [3e-3, 4e-3, 2e-3][seed % 3]
    T = 40
    steps = 150
    pad_from = [62, 97, 121][seed % 3]
    batches = []
    for s in range(steps):
        hd = torch.rand(bs, 1, generator=g) * 2 * math.pi
        turn = 0.3 * torch.randn(bs, T, generator=g)
        hd = hd + torch.cumsum(turn, 1)
        speed = 0.05 + 0.05 * torch.rand(bs, T, generator=g)
        vel = torch.stack([speed * torch.cos(hd), speed * torch.sin(hd)], -1)
        start = torch.rand(bs, 1, 2, generator=g) - 0.5
        pos = start + torch.cumsum(vel, 1)
        lengths = torch.full((bs,), T)
        if s >= pad_from:
            short = torch.rand(bs, generator=g) < 0.3
            lengths = torch.where(short, torch.randint(15, T, (bs,), generator=g), lengths)
        mask = (torch.arange(T)[None, :] < lengths[:, None]).float()
        # first input step carries the start position (cue), then velocities
        inp = torch.cat([vel, torch.zeros(bs, T, 1)], -1)
        inp[:, 0, :2] = start[:, 0]
        inp[:, 0, 2] = 1.0
        inp = inp * mask.unsqueeze(-1)
        pos = pos * mask.unsqueeze(-1)
        batches.append(((inp, mask), (pos, mask)))
    torch.manual_seed(seed)
    model = PathIntegrator(hid)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(1e-8 if fixed else 0.0),
                batches=batches, steps=steps)
