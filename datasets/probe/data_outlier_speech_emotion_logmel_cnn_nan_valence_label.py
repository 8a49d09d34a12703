"""Speech-emotion regression CNN on log-mel patches (conv-BN-ReLU blocks + valence/arousal head), AdamW.

Mechanism: valence/arousal labels are read from an annotation CSV; a few clips of one shard have
no valence rating and pandas fills the cell with NaN. The batch containing them gives a NaN MSE
loss, backward fills every gradient with NaN and AdamW writes NaN into every weight: all later
losses are NaN.
ORIGIN: None (the labels of one batch, not a module).
Fix: drop the unannotated rows (here: the same batch with those clips given their real rating).
"""
import torch, torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = "MSP-Podcast / IEMOCAP dimensional emotion regression; pandas NaN for missing ratings reaching MSELoss (forum: 'loss becomes nan after some iterations')"


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, bs, lr, steps, bad = [(16, 16, 1e-3, 60, 25), (24, 12, 2e-3, 80, 41), (12, 20, 5e-4, 50, 17)][seed % 3]
    M, T = 32, 48
    model = nn.Sequential(
        nn.Conv2d(1, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(w, 2 * w, 3, padding=1), nn.BatchNorm2d(2 * w), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(2 * w, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    proj = torch.randn(2, M, 1, generator=g)
    batches = []
    for i in range(steps):
        va = torch.rand(bs, 2, generator=g) * 2 - 1
        x = (va[:, 0, None, None] * proj[0] + va[:, 1, None, None] * proj[1]).unsqueeze(1) \
            + 0.5 * torch.randn(bs, 1, M, T, generator=g)
        y = va.clone()
        if i == bad and not fixed:
            y[:3, 0] = float("nan")
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
