"""Small BN ResNet image classifier (basic blocks, GAP head) trained with RMSprop.

Mechanism: RMSprop with lr=1-2 (the SGD recipe's lr; RMSprop normalises by the gradient RMS so
each weight moves ~lr per step). Every step moves every weight by ~1, far above the ~1e-3
update/weight ratio; the BN layers keep the forward finite but the logits swing wildly and the
loss oscillates around or above chance instead of going down.
ORIGIN: None (optimiser setting).
Fix: lr=1e-3.
"""
import torch, torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = "torch.optim.RMSprop used with an SGD lr (0.1); forum 'RMSprop loss not decreasing, accuracy random'"


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False); self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False); self.b2 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(x + self.b2(self.c2(self.relu(self.b1(self.c1(x))))))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, nb, bs, lr, steps = [(16, 2, 16, 1.0, 60), (20, 1, 24, 2.0, 60), (20, 1, 24, 2.0, 50)][seed % 3]
    if fixed:
        lr = 1e-3
    ncls, S = 5, 12
    model = nn.Sequential(nn.Conv2d(3, w, 3, padding=1, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
                          *[Block(w) for _ in range(nb)], nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(w, ncls))
    opt = torch.optim.RMSprop(model.parameters(), lr=lr)
    templ = torch.rand(ncls, 3, S, S, generator=g)
    batches = []
    for _ in range(steps):
        y = torch.randint(0, ncls, (bs,), generator=g)
        batches.append((((0.6 * templ[y] + 0.4 * torch.rand(bs, 3, S, S, generator=g)) - 0.5) / 0.25, y))
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
