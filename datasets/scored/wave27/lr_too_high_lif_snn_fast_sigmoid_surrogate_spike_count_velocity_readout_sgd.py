"""Neuromorphic intracortical BCI decoder: a layer of leaky integrate-and-fire (LIF) neurons,
trained with a fast-sigmoid surrogate gradient (SuperSpike / snnTorch style), receives binned
threshold crossings from 96 Utah-array channels over 25 time bins; a linear readout of the hidden
spike counts predicts 2-D cursor velocity (z-scored), trained with MSE and plain SGD through time.

Mechanism: the learning rate (1.5-3.0) was taken from an snnTorch tutorial that sums the loss over
time steps and uses a much smaller readout; here the loss is a per-trial mean and the readout sees
spike *counts* (0-25 per unit), so the curvature along the readout weights is large. SGD at this lr
overshoots: each step multiplies the velocity error instead of shrinking it, the readout weights
oscillate with growing amplitude and the loss grows geometrically to inf/NaN within tens of steps.

ORIGIN: None (lr_too_high: the optimiser setting, not a module, is the cause).

Fix: lr = 0.02 for this loss scale; model, surrogate, data and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("snnTorch / SuperSpike surrogate-gradient training (Zenke & Ganguli 2018; Neftci et al. "
          "2019) with lr copied across loss normalisations; 'loss explodes to nan with SGD' "
          "reports; SNN decoders for iBCI (Liao et al. 2022, Dethier et al. 2011)")


class FastSigmoidSpike(torch.autograd.Function):
    scale = 10.0

    @staticmethod
    def forward(ctx, v):
        ctx.save_for_backward(v)
        return (v > 0).float()

    @staticmethod
    def backward(ctx, grad):
        (v,) = ctx.saved_tensors
        return grad / (FastSigmoidSpike.scale * v.abs() + 1.0) ** 2


class LIFLayer(nn.Module):
    def __init__(self, n_in, n_hidden, beta):
        super().__init__()
        self.fc = nn.Linear(n_in, n_hidden)
        self.beta = beta

    def forward(self, x):  # x: (B, T, n_in) spike counts per bin
        v = torch.zeros(x.shape[0], self.fc.out_features)
        spikes = []
        for t in range(x.shape[1]):
            v = self.beta * v + self.fc(x[:, t])
            s = FastSigmoidSpike.apply(v - 1.0)
            v = v - s  # soft reset
            spikes.append(s)
        return torch.stack(spikes, 1)


class SNNDecoder(nn.Module):
    def __init__(self, n_in, n_hidden, beta):
        super().__init__()
        self.lif = LIFLayer(n_in, n_hidden, beta)
        self.readout = nn.Linear(n_hidden, 2)

    def forward(self, x):
        return self.readout(self.lif(x).sum(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_ch, T = 96, 25
    hidden = [64, 96, 128][seed % 3]
    beta = [0.9, 0.85, 0.95][seed % 3]
    batch = [32, 48, 64][(seed + 1) % 3]
    lr = 0.02 if fixed else [2.0, 1.5, 3.0][seed % 3]
    steps = 100

    pd = torch.rand(n_ch, generator=g) * 6.283  # preferred directions (cosine tuning)
    base = 0.1 + 0.2 * torch.rand(n_ch, generator=g)
    torch.manual_seed(seed)
    model = SNNDecoder(n_ch, hidden, beta)
    batches = []
    for _ in range(steps):
        ang = torch.rand(batch, generator=g) * 6.283
        speed = 0.5 + torch.rand(batch, generator=g)
        vel = torch.stack([speed * torch.cos(ang), speed * torch.sin(ang)], 1)
        rate = base * (1 + 0.8 * speed[:, None] * torch.cos(ang[:, None] - pd[None]))
        x = torch.bernoulli(rate.clamp(0, 1)[:, None, :].expand(batch, T, n_ch), generator=g)
        batches.append((x, vel / 0.8))

    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
