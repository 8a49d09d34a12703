"""Healthy: dilated causal-conv (TCN) demand forecaster with two heads, trained with a
multi-term weighted objective: the pinball (quantile) loss for quantiles 0.1/0.5/0.9 over the
horizon, *summed* over batch, horizon and quantiles (as in the MQ-CNN code it follows), plus
an auxiliary input-reconstruction term that is switched on part-way through training (its
step varies with the seed) with weight 0.05 and then ramped to 0.1 (the weight travels with
each batch's target), RMSprop optimiser.

Why it looks suspicious but is healthy: the summed loss is in the hundreds to thousands;
when the auxiliary term switches on, the total loss jumps up abruptly (a new term, not a
divergence) and then decreases again; the pinball loss is piecewise linear so many gradient
entries of a saturated quantile are exactly the same from step to step. Both terms keep
decreasing and the run ends far below its start.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Wen et al. 2017 MQ-RNN/MQ-CNN multi-horizon quantile forecaster (summed quantile loss); Bai et al. "
          "2018 TCN; auxiliary reconstruction losses switched on after a warm-up (common multi-task recipe)")

QUANTILES = (0.1, 0.5, 0.9)


class TCNForecaster(nn.Module):
    def __init__(self, ch, levels, T, H):
        super().__init__()
        self.convs = nn.ModuleList()
        c = 1
        for i in range(levels):
            self.convs.append(nn.Conv1d(c, ch, 3, dilation=2 ** i, padding=2 * 2 ** i))
            c = ch
        self.quant_head = nn.Linear(ch, H * len(QUANTILES))
        self.recon_head = nn.Conv1d(ch, 1, 1)
        self.H, self.T = H, T

    def forward(self, x):
        h = x.unsqueeze(1)
        for conv in self.convs:
            h = F.relu(conv(h)[..., : self.T]) + (h if h.shape[1] == conv.out_channels else 0)
        q = self.quant_head(h[..., -1]).view(-1, self.H, len(QUANTILES))
        recon = self.recon_head(h).squeeze(1)
        return q, recon


def weighted_loss(out, target):
    q, recon = out
    y, hist, w_aux = target
    taus = torch.tensor(QUANTILES)
    u = y.unsqueeze(-1) - q
    pinball = torch.maximum(taus * u, (taus - 1) * u).sum()                     # summed, MQ-CNN style
    aux = ((recon[:, :-1] - hist[:, 1:]) ** 2).sum()                              # next-step reconstruction
    return pinball + w_aux * aux


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [32, 48, 24][seed % 3]
    levels = 3 + seed % 2
    batch = [32, 24, 40][seed % 3]
    lr = [1e-3, 7e-4, 1.5e-3][seed % 3]
    aux_start = [60, 80, 45][seed % 3]
    T, H, steps = 48, 8, 160

    torch.manual_seed(seed)
    model = TCNForecaster(ch, levels, T, H)

    batches = []
    for step in range(steps):
        t = torch.arange(T + H).float()[None]
        level = 2.0 + torch.rand(batch, 1, generator=g)
        weekly = torch.sin(6.283 * t / 7.0 + 6.283 * torch.rand(batch, 1, generator=g))
        noise = 0.9 * torch.rand(batch, T + H, generator=g) ** 2
        series = level + 0.6 * weekly + noise
        hist, fut = series[:, :T], series[:, T:]
        # auxiliary weight schedule: off, then switched on at 0.05 and ramped to 0.1
        w_aux = 0.0 if step < aux_start else 0.05 + 0.05 * (step - aux_start) / (steps - aux_start)
        batches.append((hist, (fut, hist, w_aux)))

    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": weighted_loss,
            "batches": batches, "steps": steps}
