"""Healthy: BN CNN scene classifier (conv-BN-ReLU, GAP) with AdamW, one shard with shuffled labels.

Looks alarming: one batch mid-run comes from a shard whose labels are shuffled (annotation-tool
bug): the loss jumps to several times its running value for that step, gradients spike, and ~half
of the ReLU units are inactive on any input (normal for BN-ReLU). It is harmless: the data is finite,
the step is bounded by AdamW and the next clean batches bring the loss straight back down.
ORIGIN: None (healthy).
"""
import torch, torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "noisy-label shards in scene/ImageNet-style datasets; transient loss spikes that recover"


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, bs, lr, steps, bad = [(16, 16, 2e-3, 70, 40), (12, 24, 1e-3, 90, 55), (20, 12, 3e-3, 60, 30)][seed % 3]
    ncls, S = 6, 12
    model = nn.Sequential(
        nn.Conv2d(3, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
        nn.Conv2d(w, 2 * w, 3, padding=1, stride=2, bias=False), nn.BatchNorm2d(2 * w), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * w, ncls))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    templ = torch.rand(ncls, 3, S, S, generator=g)
    batches = []
    for i in range(steps):
        y = torch.randint(0, ncls, (bs,), generator=g)
        x = ((0.6 * templ[y] + 0.4 * torch.rand(bs, 3, S, S, generator=g)) - 0.5) / 0.25
        if i == bad:
            y = y[torch.randperm(bs, generator=g)]
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(label_smoothing=0.1), batches=batches, steps=steps)
