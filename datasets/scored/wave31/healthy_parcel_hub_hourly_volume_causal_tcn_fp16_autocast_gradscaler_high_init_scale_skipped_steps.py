"""Sortation-hub parcel volume forecaster: a causal dilated TCN over the hourly inbound volume of a
hub (log1p counts + calendar channels) predicting next-hour volume with a Poisson NLL (log-rate
output), trained under torch.autocast(float16) with a GradScaler.

Why it looks alarming but is healthy: the scaler is created with init_scale = 2**20 (a value copied
from a large-model recipe). On the first steps the scaled loss's gradients overflow float16 in the
backward of the convolutions, so the scaler finds inf gradients, *skips* optimizer.step() and halves
the scale: the parameters do not change at all for several steps (exactly-zero updates, inf/NaN in
.grad). Once the scale has come down to a safe value, every step goes through and the loss falls
normally. The Poisson NLL without the log(y!) term is also a negative number for high-volume
hours, and the hourly series has a strong daily peak, so single-batch losses swing. This is the
GradScaler working as designed, not a failure.

ORIGIN: None (healthy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("PyTorch AMP docs: GradScaler skips optimizer.step() when scaled gradients contain inf/NaN "
          "and reduces the scale (backoff_factor=0.5), which is expected during the first iterations; "
          "Bai et al. 'An Empirical Evaluation of Generic Convolutional and Recurrent Networks' (TCN)")


class CausalConvBlock(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.conv = nn.Conv1d(ch, ch, 3, dilation=dilation)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.act(self.conv(F.pad(x, (self.pad, 0))))


class HubTCN(nn.Module):
    def __init__(self, c_in, ch, levels):
        super().__init__()
        self.inp = nn.Conv1d(c_in, ch, 1)
        self.blocks = nn.Sequential(*[CausalConvBlock(ch, 2 ** i) for i in range(levels)])
        self.out = nn.Conv1d(ch, 1, 1)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x))).squeeze(1)          # (B, T) next-hour log-rate


def poisson_nll(log_rate, y):
    return F.poisson_nll_loss(log_rate.float(), y, log_input=True, full=False)


def _hubs(g, bs, T):
    t = torch.arange(T + 1).float().unsqueeze(0) + torch.randint(0, 168, (bs, 1), generator=g).float()
    hod = t % 24
    dow = (t // 24) % 7
    size = torch.exp(torch.randn(bs, 1, generator=g) * 0.5 + 3.0)        # hub size, ~20 parcels/hour
    # evening line-haul arrivals peak + weekday effect
    shape = 0.3 + 1.6 * torch.exp(-((hod - 20) % 24 - 0) ** 2 / 8) + 0.8 * torch.exp(-(hod - 9) ** 2 / 6)
    rate = size * shape * (1 - 0.35 * (dow >= 5).float())
    y = torch.poisson(rate, generator=g)
    x = torch.stack([torch.log1p(y[:, :-1]) / 3, torch.sin(6.283 * hod[:, :-1] / 24),
                     torch.cos(6.283 * hod[:, :-1] / 24), (dow[:, :-1] >= 5).float()], 1)
    return x, y[:, 1:]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [32, 32, 24][seed % 3]
    levels = [4, 3, 5][seed % 3]
    bs = [12, 10, 8][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    T = 72
    steps = 150
    torch.manual_seed(seed)
    model = HubTCN(4, ch, levels)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 20)
    batches = [_hubs(g, bs, T) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=poisson_nll, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=scaler)
