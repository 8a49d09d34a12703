"""Tabular ResNet (Gorishniy et al. 2021 style, normalisation removed) for credit-default
scoring on standardised bureau features.

Mechanism: the user wrote `nn.init.normal_(m.weight)` in an init loop meaning "normal init",
which uses std=1.  In each residual block x + W2 relu(W1 x) the branch multiplies the scale by
~width/sqrt(2) (tens), so the residual stream grows geometrically with depth: after ~25-30
blocks the activations pass float32 max at step 0 and the logits / BCE loss are inf/NaN.

ORIGIN: blocks.0.lin1, the first residual branch linear, where the geometric growth starts
(the input projection alone only multiplies the scale once).
Fix: keep PyTorch's default (kaiming-uniform) init.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "blocks.0.lin1"
SOURCE = "Tabular ResNet baselines (Gorishniy et al. 2021); forum reports of nn.init.normal_ without std on deep residual MLPs giving inf logits"


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin1 = nn.Linear(d, d)
        self.act = nn.ReLU()
        self.lin2 = nn.Linear(d, d)

    def forward(self, x):
        return x + self.lin2(self.act(self.lin1(x)))


class TabResNet(nn.Module):
    def __init__(self, n_in, d, depth):
        super().__init__()
        self.inp = nn.Linear(n_in, d)
        self.blocks = nn.Sequential(*[Block(d) for _ in range(depth)])
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(torch.relu(self.blocks(self.inp(x)))).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=64, depth=24, bs=64, lr=1e-3), dict(d=96, depth=22, bs=48, lr=5e-4), dict(d=48, depth=32, bs=64, lr=1e-3)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(200 + seed)
    n_in = 20
    model = TabResNet(n_in, cfg["d"], cfg["depth"])
    if not fixed:
        for m in model.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight)
                nn.init.zeros_(m.bias)
    w = torch.randn(n_in, generator=g) * 0.8
    steps = 60
    batches = []
    for _ in range(steps):
        x = torch.randn(cfg["bs"], n_in, generator=g)
        logit = x @ w - 1.5 + 0.5 * x[:, 0] * x[:, 1]
        y = (torch.rand(cfg["bs"], generator=g) < torch.sigmoid(logit)).float()
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=steps)
