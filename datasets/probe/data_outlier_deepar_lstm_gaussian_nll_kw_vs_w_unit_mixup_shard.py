"""DeepAR-style LSTM (Salinas et al.) for household load: an LSTM over lagged loads emits mu and
sigma=softplus(.) for the next value, trained with the Gaussian negative log-likelihood and SGD
with momentum.  One meter's shard was exported in W instead of kW, so one batch has inputs and
targets 1000x larger than the rest (finite, plausible-looking numbers).

Mechanism: the NLL term (y-mu)^2/(2 sigma^2) of that batch is ~1e6 and its gradient throws the
LSTM and the mu/sigma heads far away in one momentum-amplified step; the gates saturate and the
run never returns (the loss stays far above its start or overflows).
ORIGIN: None (a corrupt shard, not a module).
Fix: that shard converted back to kW (divided by 1000) like the others.
"""
import math, torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "DeepAR (Salinas et al. 2017) PyTorch reimplementations on UCI electricity load; unit mix-ups (W vs kW) between meter exports"


class DeepAR(nn.Module):
    def __init__(self, H, nl):
        super().__init__()
        self.lstm = nn.LSTM(2, H, num_layers=nl, batch_first=True)
        self.mu = nn.Linear(H, 1)
        self.sig = nn.Linear(H, 1)

    def forward(self, x):
        h, _ = self.lstm(x)
        return torch.cat([self.mu(h), F.softplus(self.sig(h)) + 1e-3], -1)


def gauss_nll(out, y):
    mu, s = out[..., 0], out[..., 1]
    return (torch.log(s) + 0.5 * ((y - mu) / s) ** 2 + 0.5 * math.log(2 * math.pi)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(H=32, nl=1, bs=32, T=24, lr=0.02, bad=12, steps=100),
           dict(H=24, nl=2, bs=24, T=32, lr=0.03, bad=20, steps=120),
           dict(H=48, nl=1, bs=40, T=20, lr=0.015, bad=8, steps=90)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    batches = []
    for k in range(cfg["steps"]):
        t = torch.rand(cfg["bs"], 1, generator=g) * 24 + torch.arange(cfg["T"] + 1).float()
        load = 1.0 + 0.6 * torch.sin(2 * math.pi * t / 24) + 0.15 * torch.randn(t.shape, generator=g)
        if k == cfg["bad"] and not fixed:
            load = load * 1000.0
        tod = torch.sin(2 * math.pi * t[:, :-1] / 24)
        x = torch.stack([load[:, :-1], tod], -1)
        batches.append((x, load[:, 1:]))
    model = DeepAR(cfg["H"], cfg["nl"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=gauss_nll, batches=batches, steps=cfg["steps"])
