"""Bearing fault diagnosis on raw vibration (CWRU-style: normal, inner-race, outer-race, ball
faults) with WDCNN (Zhang et al. 2017: a wide first-layer kernel Conv1d followed by small
kernels, no BN in this lightweight variant), trained with plain SGD.

Mechanism: the loss is CrossEntropyLoss(reduction='sum') (copied from a per-sample example)
while the lr (0.03-0.08) was tuned for the default mean reduction.  Summing over the batch
multiplies every gradient -- and so the effective step -- by the batch size (24-48): an
effective lr of ~1.4-1.9 on an un-normalised CNN.  The updates overshoot, the logits blow up
and the loss diverges to inf/NaN or oscillates at a high level instead of converging.

ORIGIN: None -- the step size is wrong for every layer; no single module starts it.

Fix: lr divided by the batch size (equivalently the lr that matches the summed loss).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "WDCNN (Zhang et al., Sensors 2017) on CWRU bearing data; reduction='sum' with an lr tuned for mean-reduced loss (PyTorch forum: 'loss explodes with reduction sum')"

_CFG = {0: dict(ch=16, lr=0.05, bs=32, steps=60),
        1: dict(ch=24, lr=0.06, bs=48, steps=60),
        2: dict(ch=12, lr=0.08, bs=24, steps=70)}


def _batch(g, n, L=512):
    y = torch.randint(0, 4, (n,), generator=g)
    t = torch.arange(L).float().view(1, L)
    fr = torch.tensor([0.0, 0.06, 0.11, 0.17])[y].view(n, 1)  # fault-related resonance band
    am = torch.tensor([0.0, 1.0, 1.0, 1.0])[y].view(n, 1)
    ph = 6.28 * torch.rand(n, 1, generator=g)
    x = am * torch.sin(2 * 3.14159 * fr * t + ph) + 0.3 * torch.sin(2 * 3.14159 * 0.005 * t) \
        + 0.5 * torch.randn(n, L, generator=g)
    return x.unsqueeze(1), y


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17 + seed)
    ch = c["ch"]
    model = nn.Sequential(
        nn.Conv1d(1, ch, 64, stride=16, padding=24), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(ch, 2 * ch, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(2 * ch, 2 * ch, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2),
        nn.Conv1d(2 * ch, 2 * ch, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
        nn.Flatten(), nn.Linear(2 * ch, 64), nn.ReLU(), nn.Linear(64, 4))
    lr = c["lr"] / c["bs"] if fixed else c["lr"]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_batch(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(reduction="sum"),
                batches=batches, steps=c["steps"])
